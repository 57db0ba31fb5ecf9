import { randomBytes } from 'node:crypto';
import { askedBehaviour } from '../core/behaviour';
import { ApiRefusal, createOrganization, Tenant } from '../core/hookbase-api';
import { Ledger } from '../core/ledger';
import { planEvents } from '../core/pacing';
import { fmtInt, fmtMs, fmtRate, fmtRatio } from '../core/report';
import { RunReport, ScenarioResult } from '../core/result';
import { BenchSession, DeliveryRun, Scenario, ScenarioContext } from '../core/session';
import { now, ScenarioUnavailable } from '../core/util';
import { acquireMoto, BodyDigests, CloudKind, CloudRig } from '../drivers/cloud';
import { IngestClient, publishSeq } from '../drivers/ingest-clients';
import { runOpenLoop } from '../drivers/publisher';

/** Retries shortened through the API so a failed first attempt is retried within the run. */
export const SHORT_RETRY = { delaysMs: [0, 200, 1000], maxAgeMs: 60_000 };

/**
 * One e2e run: load (--rate events/s for --duration s to `tenant`, each fanned out to all its
 * endpoints: no endpointIds) → drain → reconcile → the run's report.
 */
function fanOutRun(
  session: BenchSession,
  spec: { label: string; tenant: Tenant; ledger: Ledger; endpoints: number[]; drainByMs: number },
): Promise<DeliveryRun> {
  const { options, deadlineMs } = session.ctx;
  const targets = new Set(spec.endpoints);
  const planned = planEvents(options.rate, options.durationSeconds);
  const { payloadBytes, maxInFlight } = options;
  return session.deliveryRun({
    label: spec.label,
    ledger: spec.ledger,
    planned,
    offeredPerSecond: options.rate * spec.endpoints.length,
    drainSeconds: options.drainTimeoutSeconds,
    drainByMs: spec.drainByMs,
    load: () => {
      const client = new IngestClient(session.stack.ingestUrl, spec.tenant.apiKey, maxInFlight);
      return runOpenLoop({
        ratePerSecond: options.rate,
        count: planned,
        maxInFlight,
        deadlineMs: Math.min(deadlineMs, now() + options.durationSeconds * 1000 + 30_000),
        send: (seq, at) => publishSeq(spec.ledger, client, seq, at, { targets, payloadBytes }),
      }).finally(() => client.close());
    },
  });
}

/** --endpoints http endpoints of a new organization (receiver paths from `first`), and their run. */
async function httpRun(session: BenchSession, label: string, first: number): Promise<DeliveryRun> {
  const { options, deadlineMs } = session.ctx;
  const tenant = await createOrganization(session.stack, 'free');
  const ledger = new Ledger(label);
  const endpoints = Array.from({ length: options.endpoints }, (_, i) => first + i);
  const requests = endpoints.map((i) => ({
    url: `${session.receiverUrl}/e/${i}`,
    retry: SHORT_RETRY,
  }));
  const ids = await session.createEndpoints(tenant, requests);
  ids.forEach((id, i) => session.addEndpoint(id, endpoints[i], ledger, askedBehaviour(options)));
  return fanOutRun(session, { label, tenant, ledger, endpoints, drainByMs: deadlineMs });
}

function headlineOf(run: RunReport): [string, string][] {
  const m = run.ledger.messages;
  const bucket = run.timeline.length > 1 ? run.timeline[1].t - run.timeline[0].t : 1;
  const { latency: l, lag } = run;
  return [
    [
      `${run.label}: deliveries/s`,
      `${fmtRate(run.throughputPerSecond)} (peak ${fmtRate(run.peakDeliveredPerSecond)} in a ${bucket} s bucket); offered ${fmtRate(run.offeredPerSecond)}`,
    ],
    [
      `${run.label}: latency (received − scheduled)`,
      `p50 ${fmtMs(l?.p50)} · p95 ${fmtMs(l?.p95)} · p99 ${fmtMs(l?.p99)} · max ${fmtMs(l?.max)}`,
    ],
    [
      `${run.label}: messages`,
      `published ${fmtInt(m.published)} = delivered ${fmtInt(m.delivered)} + dead-lettered ${fmtInt(m.deadLettered)} + missing ${fmtInt(m.missing)} (${run.ledger.balanced ? 'balanced' : 'NOT balanced'}); duplicates ${fmtInt(m.duplicates)}; attempts ${fmtInt(m.attempts)} (${fmtInt(m.failedAttempts)} failed on purpose or dropped)`,
    ],
    [
      `${run.label}: publish`,
      `send delay p99 ${fmtMs(run.sendDelay?.p99)} · accept p50 ${fmtMs(run.acceptLatency?.p50)} p99 ${fmtMs(run.acceptLatency?.p99)} · peak lag dispatcher ${fmtInt(lag.peak?.dispatcher)} fan-out ${fmtInt(lag.peak?.fanout)}`,
    ],
  ];
}

const brief = (run: RunReport) =>
  `${run.label} ${fmtRate(run.throughputPerSecond)} deliveries/s, p50 ${fmtMs(run.latency?.p50)}, p99 ${fmtMs(run.latency?.p99)}`;

/**
 * e2e: --endpoints endpoints (1,000) of one organization, each subscribed to every type,
 * unordered; every event fans out to all of them, so the figure is fan-out + dispatch (ingest
 * alone is ingest-rest's). With --fail-rate the receiver fails that share of first attempts.
 * With --kind sqs|s3: setup (moto, a queue per endpoint or a bucket with a prefix per endpoint,
 * the endpoints, a reader that sees each delivery) → the fan-out run into moto → unless
 * --no-http-run, the same load to as many http endpoints of a second organization in the same
 * stack, so the two figures stand side by side.
 */
async function runE2e(ctx: ScenarioContext): Promise<ScenarioResult> {
  const { progress, options } = ctx;
  const kind = options.kind === 'http' ? undefined : (options.kind as CloudKind);
  const moto = kind ? await acquireMoto(Math.max(10_000, ctx.deadlineMs - now())) : undefined;
  if (moto) {
    ctx.cleanup.add('moto lease', () => moto.release());
    // Cloud endpoints carry credentials, which Hookbase stores only with a credentials key.
    const key = randomBytes(32).toString('base64');
    ctx = {
      ...ctx,
      options: { ...options, stackEnv: { HOOKBASE_CREDENTIALS_KEY: key, ...options.stackEnv } },
    };
  }
  const session = await BenchSession.open(ctx);
  const rig =
    moto &&
    kind &&
    new CloudRig(kind, moto.url, session.runId, Math.min(options.endpoints, 100) + 32);
  try {
    const runs: DeliveryRun[] = [];
    if (rig) {
      const count = options.endpoints;
      session.setPhase('setup', () => `${kind} in moto`);
      await rig.provision(count, () => undefined);
      const tenant = await createOrganization(session.stack, 'free');
      const ledger = new Ledger(rig.kind);
      const requests = Array.from({ length: count }, (_, i) => rig.endpointRequest(i, SHORT_RETRY));
      const ids = await session.createEndpoints(tenant, requests, 8).catch((error: Error) => {
        if (!(error instanceof ApiRefusal)) throw error;
        throw new ScenarioUnavailable(`Hookbase refused ${kind} endpoints: ${error.message}`);
      });
      ids.forEach((id, i) => session.trackDeadLetters(id, i, ledger));
      rig.startReader(
        ledger,
        new BodyDigests(planEvents(options.rate, options.durationSeconds), options.payloadBytes),
      );
      // Leave the http run its time: its load, a drain and setup.
      const reserveMs = options.httpBeside ? (options.durationSeconds + 30) * 1000 : 0;
      const endpoints = ids.map((_, i) => i);
      runs.push(
        await fanOutRun(session, {
          label: rig.kind,
          tenant,
          ledger,
          endpoints,
          drainByMs: ctx.deadlineMs - reserveMs,
        }),
      );
      await rig.stopReader();
    }
    if (!rig || options.httpBeside)
      runs.push(await httpRun(session, rig ? 'http' : 'e2e', rig ? options.endpoints : 0));
    const [first, http] = [runs[0].run, runs[1]?.run];
    const failing =
      options.failRate > 0
        ? `, receiver fails ${options.failRate * 100}% of first attempts with ${options.failWith}`
        : '';
    const where =
      kind === 'sqs'
        ? ` in moto (${fmtInt(options.endpoints)} SQS queues, one per endpoint)`
        : kind === 's3'
          ? ` in moto (one S3 bucket, a prefix per endpoint)`
          : '';
    return await session.result({
      summary: `${runs.map((r) => brief(r.run)).join('; ')}; missing ${fmtInt(runs.reduce((n, r) => n + r.run.ledger.messages.missing, 0))}, duplicates ${fmtInt(runs.reduce((n, r) => n + r.run.ledger.messages.duplicates, 0))}`,
      title: `${fmtInt(options.endpoints)} ${kind ?? ''} endpoints${where}, fan-out to all, ${options.rate} events/s for ${options.durationSeconds} s${failing}${http ? '; then http at the same settings' : ''}`,
      headline: [
        ...runs.flatMap((r) => headlineOf(r.run)),
        ...(rig ? [rig.describeReader()] : []),
        ...(rig && http
          ? [
              [
                `${kind} ÷ http`,
                `deliveries/s ${fmtRatio(first.throughputPerSecond, http.throughputPerSecond)} · p50 ${fmtMs(first.latency?.p50)} vs ${fmtMs(http.latency?.p50)} · p99 ${fmtMs(first.latency?.p99)} vs ${fmtMs(http.latency?.p99)}`,
              ] as [string, string],
            ]
          : []),
        ['dead letters by reason', JSON.stringify(session.reasonsFor())],
      ],
      runs: runs.map((r) => r.run),
      problems: [...runs.flatMap((r) => r.problems), ...(rig?.readerProblems() ?? [])],
      notes: [
        ...(rig
          ? [
              `${kind} latency is first seen by the bench's reader − scheduled: it includes the reader's own delay (${kind === 'sqs' ? 'long-poll ReceiveMessage' : 'the ListObjectsV2 sweep interval'}), measured above; failed attempts are not visible to it`,
              'moto is a single Python process on the same cores: the cloud figure is Hookbase plus moto, bounded by moto',
            ]
          : []),
        'each event is fanned out to every endpoint (no endpointIds): deliveries/s measures fan-out + dispatch, not ingest',
      ],
      extra: rig ? { kind, reader: rig.readerExtra(), motoStartedByUs: moto?.startedByUs } : {},
    });
  } finally {
    await rig?.tearDown().catch((error: Error) => progress.note(`moto cleanup: ${error.message}`));
    await session.close();
    await moto?.release().catch((error: Error) => progress.note(`moto release: ${error.message}`));
  }
}

export const E2E: Scenario = {
  name: 'e2e',
  summary:
    'fan-out to --endpoints http endpoints, --rate events/s for --duration s; --kind sqs|s3: to\nqueues / a bucket in moto (50 endpoints), then http beside it',
  flags: [
    'endpoints',
    'rate',
    'duration',
    'max-in-flight',
    'receiver-latency',
    'fail-rate',
    'fail-status',
    'kind',
    'no-http-run',
  ],
  defaults: { endpoints: 1000, rate: 1, durationSeconds: 20, drainTimeoutSeconds: 90 },
  // --kind sqs|s3: 50 endpoints unless --endpoints says otherwise (moto takes ~100 sends/s here).
  refine: (given) => ({ defaults: given.kind && given.kind !== 'http' ? { endpoints: 50 } : {} }),
  run: runE2e,
};
