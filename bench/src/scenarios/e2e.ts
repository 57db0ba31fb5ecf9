import { randomBytes } from 'node:crypto';
import { EndpointBehaviour } from '../core/behaviour';
import {
  CloudKind,
  cloudEndpointRequest,
  createBucket,
  createQueues,
  deleteBucket,
  deleteQueues,
  motoBound,
  motoClients,
} from '../drivers/cloud-destinations';
import { BodyDigests } from '../drivers/cloud-sighting';
import { now } from '../core/clock';
import { ScenarioUnavailable } from '../core/errors';
import { ApiRefusal, createEndpoints, createOrganization, Tenant } from '../core/hookbase-api';
import { Ledger } from '../core/ledger';
import { acquireMoto, MotoLease } from '../drivers/moto-lease';
import { planEvents } from '../core/pacing';
import {
  benchPayload,
  EVENT_TYPE,
  IngestClient,
  publishInto,
  runOpenLoop,
} from '../drivers/publisher';
import { fmtInt, fmtMs, fmtRate } from '../core/report';
import { RunReport, ScenarioResult } from '../core/result';
import { S3Reader } from '../drivers/s3-reader';
import { BenchSession, ScenarioContext } from '../core/session';
import { SqsReader } from '../drivers/sqs-reader';
import { distribution } from '../core/stats';
import { Scenario } from '../core/scenario';

/** Retries shortened through the API so a failed first attempt is retried within the run. */
export const SHORT_RETRY = { delaysMs: [0, 200, 1000], maxAgeMs: 60_000 };

/** The moto bound: the bench's own SendMessage/PutObject calls, this many in flight, this long. */
const BOUND_CONCURRENCY = 16;
const BOUND_SECONDS = 2;

/**
 * e2e: one organization with N endpoints (1000 http), each subscribed to every type, unordered.
 * Each event is fanned out by Hookbase to all endpoints (no endpointIds): one publish makes N
 * deliveries, so ingest stays off the critical path and the figure is the fan-out + dispatch
 * pipeline's (ingest alone is ingest-rest's). With --fail-rate the receiver fails that share of
 * first attempts; their retries succeed.
 *
 * --kind sqs|s3 delivers to moto instead (50 endpoints: a queue each, or a prefix each in one
 * bucket), read back by the bench's SQS consumers or S3 lister; then, unless --no-http-run, the
 * same load goes to as many http endpoints of a second organization in the same stack, so the two
 * figures stand side by side.
 */
export async function runE2e(ctx: ScenarioContext): Promise<ScenarioResult> {
  return ctx.options.kind === 'http' ? runHttpE2e(ctx) : runCloudE2e(ctx, ctx.options.kind);
}

interface FanOutRun {
  run: RunReport;
  problems: string[];
}

/**
 * Publishes the open-loop load to `tenant` (every event to all its endpoints), waits until the
 * ledger settles or `drainDeadlineMs`, and reports the run.
 */
async function fanOutRun(
  session: BenchSession,
  ctx: ScenarioContext,
  spec: {
    label: string;
    tenant: Tenant;
    ledger: Ledger;
    endpoints: number[];
    drainDeadlineMs: number;
  },
): Promise<FanOutRun> {
  const { options } = ctx;
  const { ledger } = spec;
  const everyone = new Set(spec.endpoints);
  const client = new IngestClient(session.stack.ingestUrl, spec.tenant.apiKey, options.maxInFlight);
  const planned = planEvents(options.rate, options.durationSeconds);
  session.watch(`${spec.label} load`, [ledger], planned);
  const startMs = now();
  const load = await runOpenLoop({
    ratePerSecond: options.rate,
    count: planned,
    maxInFlight: options.maxInFlight,
    deadlineMs: Math.min(ctx.deadlineMs, startMs + options.durationSeconds * 1000 + 30_000),
    send: async (seq, scheduledAt) => {
      ledger.schedule(seq, scheduledAt, everyone);
      await publishInto(ledger, client, seq, {
        eventType: EVENT_TYPE,
        payload: benchPayload(seq, options.payloadBytes),
      });
    },
  });
  const loadEndMs = now();
  await client.close();
  session.watch(`${spec.label} draining`, [ledger], null);
  const settled = await session.drain(
    [ledger],
    Math.min(spec.drainDeadlineMs, loadEndMs + options.drainTimeoutSeconds * 1000),
  );
  const run = await session.report(
    {
      label: spec.label,
      startMs,
      loadEndMs,
      offeredPerSecond: options.rate * spec.endpoints.length,
    },
    ledger,
  );
  const problems = run.ledger.problems.map((p) => `${spec.label}: ${p}`);
  if (!settled) problems.push(`${spec.label}: deliveries did not settle in time after the load`);
  if (load.stoppedByDeadline)
    problems.push(
      `${spec.label}: the load stopped at its deadline after ${load.started} of ${planned} events`,
    );
  return { run, problems };
}

/** Creates `count` http endpoints to the bench's receiver, indexes from `firstIndex`. */
async function httpEndpoints(
  session: BenchSession,
  ctx: ScenarioContext,
  tenant: Tenant,
  ledger: Ledger,
  firstIndex: number,
): Promise<number[]> {
  const { options } = ctx;
  const behaviour: EndpointBehaviour = {
    latencyMs: options.receiverLatencyMs,
    failRate: options.failRate,
    failWith: options.failWith,
    failAttempts: 'first',
  };
  const count = options.endpoints;
  let created = 0;
  session.setPhase(
    'setup',
    () => `http endpoints ${fmtInt(created)}/${fmtInt(count)}`,
    () => created / count,
  );
  const indexes = Array.from({ length: count }, (_, i) => firstIndex + i);
  const ids = await createEndpoints(
    tenant,
    indexes.map((index) => ({ url: `${session.receiverUrl}/e/${index}`, retry: SHORT_RETRY })),
    16,
    (done) => (created = done),
  );
  ids.forEach((id, i) => session.addEndpoint(id, indexes[i], ledger, behaviour));
  return indexes;
}

function headlineOf(run: RunReport): [string, string][] {
  const m = run.ledger.messages;
  return [
    [
      `${run.label}: deliveries/s`,
      `${fmtRate(run.throughputPerSecond)} (peak ${fmtRate(run.peakDeliveredPerSecond)} in a ${run.timeline.length > 1 ? run.timeline[1].t - run.timeline[0].t : 1} s bucket); offered ${fmtRate(run.offeredPerSecond)}`,
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

async function runHttpE2e(ctx: ScenarioContext): Promise<ScenarioResult> {
  const { options, progress } = ctx;
  const session = await BenchSession.open(ctx);
  try {
    const tenant = await createOrganization(session.stack, 'free');
    const ledger = new Ledger('e2e');
    const endpoints = await httpEndpoints(session, ctx, tenant, ledger, 0);
    progress.note(
      `e2e: ${fmtInt(endpoints.length)} endpoints created; ${options.rate} events/s for ${options.durationSeconds} s, each to all`,
    );
    const { run, problems } = await fanOutRun(session, ctx, {
      label: 'e2e',
      tenant,
      ledger,
      endpoints,
      drainDeadlineMs: ctx.deadlineMs,
    });
    const m = run.ledger.messages;
    const failing =
      options.failRate > 0
        ? `, receiver fails ${options.failRate * 100}% of first attempts with ${options.failWith}`
        : '';
    return await session.result({
      summary: `${fmtRate(run.throughputPerSecond)} deliveries/s, p50 ${fmtMs(run.latency?.p50)}, p99 ${fmtMs(run.latency?.p99)}, missing ${fmtInt(m.missing)}, duplicates ${fmtInt(m.duplicates)}`,
      title: `${fmtInt(endpoints.length)} endpoints, fan-out to all, ${options.rate} events/s for ${options.durationSeconds} s${failing}`,
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
      notes: [
        'each event is fanned out to every endpoint (no endpointIds): deliveries/s measures fan-out + dispatch, not ingest',
      ],
    });
  } finally {
    await session.close();
  }
}

/** What reads the cloud destination back into the ledger, and how its own delay is reported. */
interface CloudReader {
  stop(): Promise<void>;
  describe(): [string, string];
  problems(): string[];
  extra(): Record<string, unknown>;
}

/**
 * The cloud side of e2e --kind sqs|s3: moto's clients, the run's queues (one per endpoint) or
 * bucket (a prefix per endpoint, and the S3 bound's scratch objects under a root of their own),
 * the endpoints aimed at them, the reader that sees the deliveries, and their removal.
 */
class CloudRig {
  readonly name: string;
  readonly root: string;
  private readonly clients: ReturnType<typeof motoClients>;
  private queueUrls: string[] = [];
  private bucketMade = false;
  private reader: CloudReader | undefined;

  constructor(
    readonly kind: CloudKind,
    private readonly moto: MotoLease,
    private readonly session: BenchSession,
  ) {
    this.clients = motoClients(moto.url, Math.min(session.ctx.options.endpoints, 100) + 32);
    this.name = `bench-${session.runId}`;
    this.root = `${this.name}/`;
  }

  /** The queues (sqs) and the bucket in moto. */
  async provision(count: number): Promise<void> {
    const { session, kind } = this;
    session.setPhase(
      'setup',
      () => `${kind === 'sqs' ? `${fmtInt(count)} queues` : 'bucket'} in moto`,
    );
    if (kind === 'sqs') {
      let made = 0;
      session.setPhase(
        'setup',
        () => `queues ${made}/${count}`,
        () => made / count,
      );
      this.queueUrls = await createQueues(this.clients.sqs, this.name, count, (n) => (made = n));
    }
    await createBucket(this.clients.s3, this.name);
    this.bucketMade = true;
  }

  /** The moto bound: the bench's own SendMessage / PutObject calls. */
  bound(bodyBytes: number) {
    const call = this.kind === 'sqs' ? 'SendMessage' : 'PutObject';
    this.session.setPhase('moto bound', () => `${call} from the bench, ${BOUND_SECONDS} s`);
    return motoBound({
      kind: this.kind,
      clients: this.clients,
      name: this.name,
      bucket: this.name,
      bodyBytes,
      seconds: BOUND_SECONDS,
      concurrency: BOUND_CONCURRENCY,
    });
  }

  /** `count` endpoints of `tenant` aimed at the queues or prefixes; their dead letters go to `ledger`. */
  async endpoints(tenant: Tenant, ledger: Ledger, count: number): Promise<number[]> {
    const { session, kind } = this;
    const indexes = Array.from({ length: count }, (_, i) => i);
    let created = 0;
    session.setPhase(
      'setup',
      () => `${kind} endpoints ${fmtInt(created)}/${fmtInt(count)}`,
      () => created / count,
    );
    const target = (i: number) => ({
      queueUrl: this.queueUrls[i],
      bucket: this.name,
      root: this.root,
    });
    const requests = indexes.map((i) =>
      cloudEndpointRequest(kind, this.moto.url, target(i), i, SHORT_RETRY),
    );
    try {
      const ids = await createEndpoints(tenant, requests, 8, (done) => (created = done));
      ids.forEach((id, i) => session.trackDeadLetters(id, i, ledger));
    } catch (error) {
      if (error instanceof ApiRefusal)
        throw new ScenarioUnavailable(`Hookbase refused ${kind} endpoints: ${error.message}`);
      throw error;
    }
    return indexes;
  }

  /** Starts the reader that records each delivery it sees into `ledger`. */
  startReader(ledger: Ledger): CloudReader {
    const { options } = this.session.ctx;
    this.reader =
      this.kind === 'sqs'
        ? sqsReader(
            new SqsReader(
              this.clients.sqs,
              this.queueUrls.map((queueUrl, endpoint) => ({ queueUrl, endpoint })),
              ledger,
            ),
          )
        : s3Reader(
            new S3Reader(
              this.clients.s3,
              this.name,
              this.root,
              ledger,
              new BodyDigests(
                planEvents(options.rate, options.durationSeconds),
                options.payloadBytes,
              ),
            ),
          );
    return this.reader;
  }

  async tearDown(): Promise<void> {
    const { progress } = this.session.ctx;
    await this.reader?.stop().catch(() => undefined);
    if (this.queueUrls.length > 0)
      await deleteQueues(this.clients.sqs, this.queueUrls).catch(() => undefined);
    if (this.bucketMade)
      await deleteBucket(this.clients.s3, this.name).catch((error: Error) =>
        progress.note(`could not delete bucket ${this.name}: ${error.message}`),
      );
    this.clients.sqs.destroy();
    this.clients.s3.destroy();
  }
}

/** With a cloud kind, the same load to as many http endpoints of another organization. */
async function httpRunBeside(
  session: BenchSession,
  runCtx: ScenarioContext,
  count: number,
): Promise<FanOutRun> {
  const tenant = await createOrganization(session.stack, 'free');
  const ledger = new Ledger('http');
  const endpoints = await httpEndpoints(session, runCtx, tenant, ledger, count);
  return fanOutRun(session, runCtx, {
    label: 'http',
    tenant,
    ledger,
    endpoints,
    drainDeadlineMs: runCtx.deadlineMs,
  });
}

/** The cloud run's report: its figures, the reader's delay, the moto bound, http beside it. */
function cloudReport(
  session: BenchSession,
  rig: CloudRig,
  figures: {
    cloud: FanOutRun;
    http: FanOutRun | undefined;
    reader: CloudReader;
    bound: Awaited<ReturnType<CloudRig['bound']>>;
    motoStartedByUs: boolean;
  },
): Promise<ScenarioResult> {
  const { options } = session.ctx;
  const { kind } = rig;
  const { cloud, http, reader, bound } = figures;
  const count = options.endpoints;
  const runs = [cloud.run, ...(http ? [http.run] : [])];
  const ratio =
    http && http.run.throughputPerSecond > 0
      ? cloud.run.throughputPerSecond / http.run.throughputPerSecond
      : null;
  const where =
    kind === 'sqs'
      ? `${fmtInt(count)} SQS queues (one per endpoint)`
      : `one S3 bucket, ${fmtInt(count)} prefixes (one per endpoint)`;
  return session.result({
    summary:
      `${kind} ${fmtRate(cloud.run.throughputPerSecond)} deliveries/s, p50 ${fmtMs(cloud.run.latency?.p50)}, p99 ${fmtMs(cloud.run.latency?.p99)}` +
      (http
        ? `; http ${fmtRate(http.run.throughputPerSecond)}/s, p50 ${fmtMs(http.run.latency?.p50)}, p99 ${fmtMs(http.run.latency?.p99)}`
        : '') +
      `; missing ${fmtInt(runs.reduce((n, r) => n + r.ledger.messages.missing, 0))}`,
    title: `${fmtInt(count)} ${kind} endpoints in moto (${where}), fan-out to all, ${options.rate} events/s for ${options.durationSeconds} s${http ? '; then http at the same settings' : ''}`,
    headline: [
      ...headlineOf(cloud.run),
      reader.describe(),
      [
        'moto bound',
        `${fmtRate(bound.callsPerSecond)} ${kind === 'sqs' ? 'SendMessage' : 'PutObject'}/s from the bench (${BOUND_CONCURRENCY} in flight, ${BOUND_SECONDS} s, ${bound.errors} errors); ${kind} deliveries ÷ bound ${bound.callsPerSecond > 0 ? (cloud.run.throughputPerSecond / bound.callsPerSecond).toFixed(2) : 'n/a'}`,
      ],
      ...(http
        ? [
            ...headlineOf(http.run),
            [
              `${kind} ÷ http`,
              `deliveries/s ${ratio === null ? 'n/a' : ratio.toFixed(2)} · p50 ${fmtMs(cloud.run.latency?.p50)} vs ${fmtMs(http.run.latency?.p50)} · p99 ${fmtMs(cloud.run.latency?.p99)} vs ${fmtMs(http.run.latency?.p99)}`,
            ] as [string, string],
          ]
        : []),
      ['dead letters by reason', JSON.stringify(session.reasonsFor())],
    ],
    runs,
    problems: [...cloud.problems, ...(http?.problems ?? []), ...reader.problems()],
    notes: [
      `${kind} latency is first seen by the bench's reader − scheduled: it includes the reader's own delay (${kind === 'sqs' ? 'long-poll ReceiveMessage, then the response' : 'the ListObjectsV2 sweep interval'}), measured above`,
      `${kind} attempts count what the reader saw (successful deliveries); failed attempts are not visible to it`,
      'moto is a single Python process on the same 2 cores: the cloud figure is Hookbase plus moto, bounded by moto (see the moto bound)',
      'each event is fanned out to every endpoint (no endpointIds): deliveries/s measures fan-out + dispatch, not ingest',
    ],
    extra: {
      kind,
      motoBound: bound,
      reader: reader.extra(),
      motoStartedByUs: figures.motoStartedByUs,
    },
  });
}

/** e2e --kind sqs|s3: setup (moto, queues or bucket, endpoints, reader) → load and drain → http beside → report. */
async function runCloudE2e(ctx: ScenarioContext, kind: CloudKind): Promise<ScenarioResult> {
  const { progress } = ctx;
  const moto = await acquireMoto(Math.max(10_000, ctx.deadlineMs - now()));
  ctx.cleanup.add('moto lease', () => moto.release());
  progress.note(`moto on ${moto.url}${moto.startedByUs ? ' (started for this run)' : ' (reused)'}`);
  // Cloud endpoints carry credentials, which Hookbase stores only with a credentials key.
  const options = {
    ...ctx.options,
    stackEnv: {
      HOOKBASE_CREDENTIALS_KEY: randomBytes(32).toString('base64'),
      ...ctx.options.stackEnv,
    },
  };
  const runCtx: ScenarioContext = { ...ctx, options };
  const count = options.endpoints;
  const session = await BenchSession.open(runCtx);
  const rig = new CloudRig(kind, moto, session);
  try {
    await rig.provision(count);
    const bound = await rig.bound(options.payloadBytes);
    const tenant = await createOrganization(session.stack, 'free');
    const ledger = new Ledger(kind);
    const endpoints = await rig.endpoints(tenant, ledger, count);
    const reader = rig.startReader(ledger);
    progress.note(
      `e2e --kind ${kind}: ${fmtInt(count)} endpoints; ${options.rate} events/s for ${options.durationSeconds} s, each to all; moto bound ${fmtRate(bound.callsPerSecond)} calls/s`,
    );
    // Leave the http run its time: its load, a drain and setup.
    const httpReserveMs = options.httpBeside ? (options.durationSeconds + 30) * 1000 : 0;
    const cloud = await fanOutRun(session, runCtx, {
      label: kind,
      tenant,
      ledger,
      endpoints,
      drainDeadlineMs: ctx.deadlineMs - httpReserveMs,
    });
    await reader.stop();
    const http = options.httpBeside ? await httpRunBeside(session, runCtx, count) : undefined;
    return await cloudReport(session, rig, {
      cloud,
      http,
      reader,
      bound,
      motoStartedByUs: moto.startedByUs,
    });
  } finally {
    await rig.tearDown();
    await session.close();
    await moto.release().catch((error: Error) => progress.note(`moto release: ${error.message}`));
  }
}

function readerErrors(stats: { errors: number; lastError: string; malformed: number }): string[] {
  const problems: string[] = [];
  if (stats.malformed > 0)
    problems.push(`the reader found ${stats.malformed} bodies without a bench sequence number`);
  return problems;
}

function sqsReader(reader: SqsReader): CloudReader {
  reader.start();
  return {
    stop: () => reader.stop(),
    describe: () => {
      const delay = distribution(reader.readerDelays);
      const s = reader.stats;
      return [
        'reader (SQS consumers)',
        `${s.receives} ReceiveMessage (${s.emptyReceives} empty, long poll 1 s, 10 a batch, one loop per queue) · delay first seen − SentTimestamp p50 ${fmtMs(delay?.p50)} p99 ${fmtMs(delay?.p99)} max ${fmtMs(delay?.max)} · received again ${reader.reReceived} · errors ${s.errors}${s.lastError ? ` (${s.lastError})` : ''}`,
      ];
    },
    problems: () => readerErrors(reader.stats),
    extra: () => ({
      ...reader.stats,
      reReceived: reader.reReceived,
      delay: distribution(reader.readerDelays),
    }),
  };
}

function s3Reader(reader: S3Reader): CloudReader {
  reader.start();
  return {
    stop: () => reader.stop(),
    describe: () => {
      const interval = distribution(reader.sweepIntervals);
      const s = reader.stats;
      return [
        'reader (S3 lister)',
        `${s.lists} ListObjectsV2 (${s.emptyLists} empty), ${s.objects} objects counted (${s.byEtag} by listed ETag, ${s.read} by GET) and deleted · sweep interval p50 ${fmtMs(interval?.p50)} p99 ${fmtMs(interval?.p99)} max ${fmtMs(interval?.max)} · listed again ${s.relisted} · errors ${s.errors}${s.lastError ? ` (${s.lastError})` : ''}`,
      ];
    },
    problems: () => [
      ...readerErrors(reader.stats),
      ...(reader.stats.foreign > 0
        ? [`${reader.stats.foreign} keys under the run's root that the adapter would not write`]
        : []),
    ],
    extra: () => ({ ...reader.stats, sweepInterval: distribution(reader.sweepIntervals) }),
  };
}

/** e2e --kind sqs|s3: endpoints when --endpoints is not given (moto takes ~100 sends/s here). */
const CLOUD_E2E_ENDPOINTS = 50;

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
  refine: (given) => ({
    defaults:
      given.kind !== undefined && given.kind !== 'http' ? { endpoints: CLOUD_E2E_ENDPOINTS } : {},
  }),
  run: runE2e,
};
