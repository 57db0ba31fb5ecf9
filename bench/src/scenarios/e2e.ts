import { randomBytes } from 'node:crypto';
import { now } from '../core/clock';
import { DeliveryRun, deliveryRun } from '../core/delivery-run';
import { ScenarioUnavailable } from '../core/errors';
import {
  ApiRefusal,
  createEndpoints,
  createOrganization,
  EndpointRequest,
  Tenant,
} from '../core/hookbase-api';
import { Ledger } from '../core/ledger';
import { planEvents } from '../core/pacing';
import { fmtInt, fmtMs, fmtRate, fmtRatio } from '../core/report';
import { RunReport, ScenarioResult } from '../core/result';
import { Scenario } from '../core/scenario';
import { BenchSession, ScenarioContext } from '../core/session';
import {
  acquireMoto,
  BodyDigests,
  BOUND_CONCURRENCY,
  BOUND_SECONDS,
  CloudKind,
  CloudRig,
} from '../drivers/cloud';
import { IngestClient, publishSeq } from '../drivers/ingest-clients';
import { runOpenLoop } from '../drivers/publisher';

/** Retries shortened through the API so a failed first attempt is retried within the run. */
export const SHORT_RETRY = { delaysMs: [0, 200, 1000], maxAgeMs: 60_000 };

/** An endpoint's channels and filter under --routing; every bench event passes both. */
const ROUTED_ENDPOINT = (i: number) => ({
  channels: ['bench', `shard-${i % 8}`],
  filter: {
    eventType: 'bench.event',
    'payload.s': { $gte: 0 },
    $or: [{ 'payload.pad': { $exists: true } }, { 'payload.s': { $lt: 1e12 } }],
  },
});
/** The channels of every bench event under --routing. */
const ROUTED_CHANNELS = ['bench'];

const FAN_OUT_NOTE =
  'each event is fanned out to every endpoint (no endpointIds): deliveries/s measures fan-out + dispatch, not ingest';

/** Creates `requests` as endpoints of `tenant` (ids in request order), showing how far it got. */
async function createShown(
  session: BenchSession,
  tenant: Tenant,
  kind: string,
  requests: EndpointRequest[],
): Promise<string[]> {
  let created = 0;
  const total = requests.length;
  session.setPhase(
    'setup',
    () => `${kind} endpoints ${fmtInt(created)}/${fmtInt(total)}`,
    () => created / total,
  );
  return createEndpoints(tenant, requests, kind === 'http' ? 16 : 8, (done) => (created = done));
}

/**
 * One e2e run: --rate events/s for --duration s to `tenant`, each fanned out to all its
 * endpoints (no endpointIds: ledger indexes `endpoints`), drained, reconciled and reported.
 */
function fanOutRun(
  session: BenchSession,
  spec: { label: string; tenant: Tenant; ledger: Ledger; endpoints: number[]; drainByMs: number },
): Promise<DeliveryRun> {
  const { options, deadlineMs } = session.ctx;
  const targets = new Set(spec.endpoints);
  const planned = planEvents(options.rate, options.durationSeconds);
  return deliveryRun(session, {
    label: spec.label,
    ledger: spec.ledger,
    planned,
    offeredPerSecond: options.rate * spec.endpoints.length,
    drainSeconds: options.drainTimeoutSeconds,
    drainByMs: spec.drainByMs,
    load: async () => {
      const { ingestUrl } = session.stack;
      const client = new IngestClient(ingestUrl, spec.tenant.apiKey, options.maxInFlight);
      try {
        return await runOpenLoop({
          ratePerSecond: options.rate,
          count: planned,
          maxInFlight: options.maxInFlight,
          deadlineMs: Math.min(deadlineMs, now() + options.durationSeconds * 1000 + 30_000),
          send: (seq, at) =>
            publishSeq(spec.ledger, client, seq, at, {
              targets,
              payloadBytes: options.payloadBytes,
              ...(options.routing ? { channels: ROUTED_CHANNELS } : {}),
            }),
        });
      } finally {
        await client.close();
      }
    },
  });
}

/** --endpoints http endpoints of a new organization (receiver paths from `first`), and their run. */
async function httpRun(session: BenchSession, label: string, first: number): Promise<DeliveryRun> {
  const { options, deadlineMs } = session.ctx;
  const tenant = await createOrganization(session.stack, 'free');
  const ledger = new Ledger(label);
  const indexes = Array.from({ length: options.endpoints }, (_, i) => first + i);
  // --routing: each endpoint listens on two channels and has a filter, all of which every event
  // passes, so the deliveries are the same and the difference is the cost of the rule.
  const requests = indexes.map((i) => ({
    url: `${session.receiverUrl}/e/${i}`,
    retry: SHORT_RETRY,
    ...(options.routing ? ROUTED_ENDPOINT(i) : {}),
  }));
  const ids = await createShown(session, tenant, 'http', requests);
  const behaviour = {
    latencyMs: options.receiverLatencyMs,
    failRate: options.failRate,
    failWith: options.failWith,
    failAttempts: 'first' as const,
  };
  ids.forEach((id, i) => session.addEndpoint(id, indexes[i], ledger, behaviour));
  session.ctx.progress.note(
    `${label}: ${fmtInt(ids.length)} endpoints; ${options.rate} events/s for ${options.durationSeconds} s, each to all`,
  );
  return fanOutRun(session, { label, tenant, ledger, endpoints: indexes, drainByMs: deadlineMs });
}

function headlineOf(run: RunReport): [string, string][] {
  const m = run.ledger.messages;
  const bucket = run.timeline.length > 1 ? run.timeline[1].t - run.timeline[0].t : 1;
  return [
    [
      `${run.label}: deliveries/s`,
      `${fmtRate(run.throughputPerSecond)} (peak ${fmtRate(run.peakDeliveredPerSecond)} in a ${bucket} s bucket); offered ${fmtRate(run.offeredPerSecond)}`,
    ],
    [
      `${run.label}: latency (received − scheduled)`,
      `p50 ${fmtMs(run.latency?.p50)} · p95 ${fmtMs(run.latency?.p95)} · p99 ${fmtMs(run.latency?.p99)} · max ${fmtMs(run.latency?.max)}`,
    ],
    [
      `${run.label}: messages`,
      `published ${fmtInt(m.published)} = delivered ${fmtInt(m.delivered)} + dead-lettered ${fmtInt(m.deadLettered)} + missing ${fmtInt(m.missing)} (${run.ledger.balanced ? 'balanced' : 'NOT balanced'}); duplicates ${fmtInt(m.duplicates)}`,
    ],
    [
      `${run.label}: publish`,
      `send delay p99 ${fmtMs(run.sendDelay?.p99)} · accept p50 ${fmtMs(run.acceptLatency?.p50)} p99 ${fmtMs(run.acceptLatency?.p99)} · peak lag dispatcher ${fmtInt(run.lag.peak?.dispatcher)} fan-out ${fmtInt(run.lag.peak?.fanout)}`,
    ],
  ];
}

const brief = (run: RunReport) =>
  `${fmtRate(run.throughputPerSecond)} deliveries/s, p50 ${fmtMs(run.latency?.p50)}, p99 ${fmtMs(run.latency?.p99)}`;

/**
 * e2e: one organization with --endpoints http endpoints (1,000), each subscribed to every type,
 * unordered; every event fans out to all of them, so the figure is fan-out + dispatch (ingest
 * alone is ingest-rest's). With --fail-rate the receiver fails that share of first attempts.
 */
async function runHttpE2e(ctx: ScenarioContext): Promise<ScenarioResult> {
  const { options } = ctx;
  const session = await BenchSession.open(ctx);
  try {
    const { run, problems } = await httpRun(session, 'e2e', 0);
    const m = run.ledger.messages;
    const failing =
      options.failRate > 0
        ? `, receiver fails ${options.failRate * 100}% of first attempts with ${options.failWith}`
        : '';
    return await session.result({
      summary: `${brief(run)}, missing ${fmtInt(m.missing)}, duplicates ${fmtInt(m.duplicates)}`,
      title: `${fmtInt(options.endpoints)} endpoints, fan-out to all, ${options.rate} events/s for ${options.durationSeconds} s${failing}`,
      headline: [
        ...headlineOf(run),
        ['dead letters by reason', JSON.stringify(session.reasonsFor())],
        [
          'attempts',
          `${fmtInt(m.attempts)} (${fmtInt(m.failedAttempts)} failed on purpose or dropped)`,
        ],
      ],
      runs: [run],
      problems,
      notes: [FAN_OUT_NOTE],
    });
  } finally {
    await session.close();
  }
}

/**
 * e2e --kind sqs|s3: setup (moto, queues or bucket, endpoints, the reader) → moto's bound → the
 * fan-out run to moto → then, unless --no-http-run, the same load to as many http endpoints of
 * a second organization in the same stack, so the two figures stand side by side.
 */
async function runCloudE2e(ctx: ScenarioContext, kind: CloudKind): Promise<ScenarioResult> {
  const { progress } = ctx;
  const moto = await acquireMoto(Math.max(10_000, ctx.deadlineMs - now()));
  ctx.cleanup.add('moto lease', () => moto.release());
  progress.note(`moto on ${moto.url}${moto.startedByUs ? ' (started for this run)' : ' (reused)'}`);
  // Cloud endpoints carry credentials, which Hookbase stores only with a credentials key.
  const stackEnv = {
    HOOKBASE_CREDENTIALS_KEY: randomBytes(32).toString('base64'),
    ...ctx.options.stackEnv,
  };
  const options = { ...ctx.options, stackEnv };
  const count = options.endpoints;
  const session = await BenchSession.open({ ...ctx, options });
  const rig = new CloudRig(kind, moto.url, session.runId, Math.min(count, 100) + 32);
  try {
    let made = 0;
    session.setPhase(
      'setup',
      () => `${kind === 'sqs' ? `queues ${made}/${count}` : 'bucket'} in moto`,
    );
    await rig.provision(count, (done) => (made = done));
    const call = kind === 'sqs' ? 'SendMessage' : 'PutObject';
    session.setPhase('moto bound', () => `${call} from the bench, ${BOUND_SECONDS} s`);
    const bound = await rig.bound(options.payloadBytes);
    const tenant = await createOrganization(session.stack, 'free');
    const ledger = new Ledger(kind);
    const requests = Array.from({ length: count }, (_, i) => rig.endpointRequest(i, SHORT_RETRY));
    const ids = await createShown(session, tenant, kind, requests).catch((error: Error) => {
      if (error instanceof ApiRefusal)
        throw new ScenarioUnavailable(`Hookbase refused ${kind} endpoints: ${error.message}`);
      throw error;
    });
    ids.forEach((id, i) => session.trackDeadLetters(id, i, ledger));
    const planned = planEvents(options.rate, options.durationSeconds);
    rig.startReader(ledger, new BodyDigests(planned, options.payloadBytes));
    progress.note(
      `e2e --kind ${kind}: ${fmtInt(count)} endpoints; ${options.rate} events/s for ${options.durationSeconds} s, each to all; moto bound ${fmtRate(bound.callsPerSecond)} calls/s`,
    );
    // Leave the http run its time: its load, a drain and setup.
    const httpReserveMs = options.httpBeside ? (options.durationSeconds + 30) * 1000 : 0;
    const cloud = await fanOutRun(session, {
      label: kind,
      tenant,
      ledger,
      endpoints: ids.map((_, i) => i),
      drainByMs: ctx.deadlineMs - httpReserveMs,
    });
    await rig.stopReader();
    const http = options.httpBeside ? await httpRun(session, 'http', count) : undefined;
    const runs = [cloud.run, ...(http ? [http.run] : [])];
    const ratio = fmtRatio(cloud.run.throughputPerSecond, http?.run.throughputPerSecond);
    const ofBound = fmtRatio(cloud.run.throughputPerSecond, bound.callsPerSecond);
    const where =
      kind === 'sqs'
        ? `${fmtInt(count)} SQS queues (one per endpoint)`
        : `one S3 bucket, ${fmtInt(count)} prefixes (one per endpoint)`;
    const missing = runs.reduce((n, r) => n + r.ledger.messages.missing, 0);
    return await session.result({
      summary: `${kind} ${brief(cloud.run)}${http ? `; http ${brief(http.run)}` : ''}; missing ${fmtInt(missing)}`,
      title: `${fmtInt(count)} ${kind} endpoints in moto (${where}), fan-out to all, ${options.rate} events/s for ${options.durationSeconds} s${http ? '; then http at the same settings' : ''}`,
      headline: [
        ...headlineOf(cloud.run),
        rig.describeReader(),
        [
          'moto bound',
          `${fmtRate(bound.callsPerSecond)} ${call}/s from the bench (${BOUND_CONCURRENCY} in flight, ${BOUND_SECONDS} s, ${bound.errors} errors); ${kind} deliveries ÷ bound ${ofBound}`,
        ],
        ...(http
          ? [
              ...headlineOf(http.run),
              [
                `${kind} ÷ http`,
                `deliveries/s ${ratio} · p50 ${fmtMs(cloud.run.latency?.p50)} vs ${fmtMs(http.run.latency?.p50)} · p99 ${fmtMs(cloud.run.latency?.p99)} vs ${fmtMs(http.run.latency?.p99)}`,
              ] as [string, string],
            ]
          : []),
        ['dead letters by reason', JSON.stringify(session.reasonsFor())],
      ],
      runs,
      problems: [...cloud.problems, ...(http?.problems ?? []), ...rig.readerProblems()],
      notes: [
        `${kind} latency is first seen by the bench's reader − scheduled: it includes the reader's own delay (${kind === 'sqs' ? 'long-poll ReceiveMessage, then the response' : 'the ListObjectsV2 sweep interval'}), measured above`,
        `${kind} attempts count what the reader saw (successful deliveries); failed attempts are not visible to it`,
        'moto is a single Python process on the same 2 cores: the cloud figure is Hookbase plus moto, bounded by moto (see the moto bound)',
        FAN_OUT_NOTE,
      ],
      extra: {
        kind,
        motoBound: bound,
        reader: rig.readerExtra(),
        motoStartedByUs: moto.startedByUs,
      },
    });
  } finally {
    await rig.tearDown().catch((error: Error) => progress.note(`moto cleanup: ${error.message}`));
    await session.close();
    await moto.release().catch((error: Error) => progress.note(`moto release: ${error.message}`));
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
    'routing',
  ],
  defaults: { endpoints: 1000, rate: 1, durationSeconds: 20, drainTimeoutSeconds: 90 },
  // --kind sqs|s3: 50 endpoints unless --endpoints says otherwise (moto takes ~100 sends/s here).
  refine: (given) => ({
    defaults: given.kind !== undefined && given.kind !== 'http' ? { endpoints: 50 } : {},
  }),
  run: (ctx) =>
    ctx.options.kind === 'http' ? runHttpE2e(ctx) : runCloudE2e(ctx, ctx.options.kind),
};
