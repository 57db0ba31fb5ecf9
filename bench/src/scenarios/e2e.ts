import { askedBehaviour } from '../core/behaviour';
import { createOrganization, Tenant } from '../core/hookbase-api';
import { blockRouter, Ledger, SEQ_BLOCK } from '../core/ledger';
import { planEvents } from '../core/pacing';
import { fmtInt, fmtMs, fmtRate } from '../core/report';
import { RunReport, ScenarioResult } from '../core/result';
import { BenchSession, Scenario, ScenarioContext } from '../core/session';
import { now } from '../core/util';
import { IngestClient, publishSeq } from '../drivers/ingest-clients';
import { runOpenLoop } from '../drivers/publisher';

/** Retries shortened through the API so a failed first attempt is retried within the run. */
export const SHORT_RETRY = { delaysMs: [0, 200, 1000], maxAgeMs: 60_000 };

/**
 * Before the measured run, the same load for this long into a ledger of its own (its sequence
 * numbers in block 1), not measured: a freshly started process otherwise pays for its first
 * connections (the receiver's, PostgreSQL's pool) and the JIT inside the run, which was the whole
 * of the first second's p99 here.
 */
export const WARM_UP_SECONDS = 2;

/** --routing: every endpoint's channels and filter, all of which every bench event passes, so the
 * deliveries stay the same and the difference is the cost of the rule. */
const ROUTED_ENDPOINT = {
  channels: ['bench', 'vip'],
  filter: {
    eventType: 'bench.event',
    'payload.s': { $gte: 0 },
    $or: [{ 'payload.pad': { $exists: true } }, { 'payload.s': { $lt: 1e12 } }],
  },
};
/** The channels of every bench event under --routing. */
const ROUTED_CHANNELS = ['bench'];

/** The open-loop load: --rate events/s for `seconds` to `tenant`, sequence numbers from `firstSeq`. */
function fanOutLoad(
  session: BenchSession,
  spec: { tenant: Tenant; ledger: Ledger; targets: ReadonlySet<number> },
  seconds: number,
  firstSeq = 0,
) {
  const { options, deadlineMs } = session.ctx;
  const { payloadBytes, maxInFlight } = options;
  const client = new IngestClient(session.stack.ingestUrl, spec.tenant.apiKey, maxInFlight);
  return runOpenLoop({
    ratePerSecond: options.rate,
    count: planEvents(options.rate, seconds),
    maxInFlight,
    deadlineMs: Math.min(deadlineMs, now() + seconds * 1000 + 30_000),
    send: (seq, at) =>
      publishSeq(spec.ledger, client, firstSeq + seq, at, {
        targets: spec.targets,
        payloadBytes,
        ...(options.routing ? { channels: ROUTED_CHANNELS } : {}),
      }),
  }).finally(() => client.close());
}

/**
 * One e2e run: warm-up (the same load for WARM_UP_SECONDS, drained, not measured) → load
 * (--rate events/s for --duration s to `tenant`, each fanned out to all its endpoints: no
 * endpointIds) → drain → reconcile → the run's report.
 */
async function fanOutRun(
  session: BenchSession,
  spec: {
    label: string;
    tenant: Tenant;
    ledger: Ledger;
    warmUp: Ledger;
    endpoints: number[];
    drainByMs: number;
  },
) {
  const { options } = session.ctx;
  const targets = new Set(spec.endpoints);
  session.watch(`${spec.label}: warm-up`, [spec.warmUp], null);
  await fanOutLoad(session, { ...spec, ledger: spec.warmUp, targets }, WARM_UP_SECONDS, SEQ_BLOCK);
  await session.drain(
    [spec.warmUp],
    Math.min(spec.drainByMs, now() + options.drainTimeoutSeconds * 1000),
  );
  return session.deliveryRun({
    label: spec.label,
    ledger: spec.ledger,
    planned: planEvents(options.rate, options.durationSeconds),
    offeredPerSecond: options.rate * spec.endpoints.length,
    drainSeconds: options.drainTimeoutSeconds,
    drainByMs: spec.drainByMs,
    load: () => fanOutLoad(session, { ...spec, targets }, options.durationSeconds),
  });
}

/** --endpoints http endpoints of a new organization (receiver paths from `first`), and their run. */
async function httpRun(session: BenchSession, label: string, first: number) {
  const { options, deadlineMs } = session.ctx;
  const tenant = await createOrganization(session.stack, 'free');
  const ledger = new Ledger(label);
  const warmUp = new Ledger(`${label} warm-up`);
  const endpoints = Array.from({ length: options.endpoints }, (_, i) => first + i);
  const request = { retry: SHORT_RETRY, ...(options.routing ? ROUTED_ENDPOINT : {}) };
  const router = blockRouter([ledger, warmUp]);
  await session.addEndpoints(tenant, endpoints, router, askedBehaviour(options), request);
  return fanOutRun(session, { label, tenant, ledger, warmUp, endpoints, drainByMs: deadlineMs });
}

/** What the Runs table does not show already: offered load, peak bucket, the publisher's side. */
function headlineOf(run: RunReport): [string, string][] {
  const bucket = run.timeline.length > 1 ? run.timeline[1].t - run.timeline[0].t : 1;
  const { lag, ledger } = run;
  return [
    [
      `${run.label}: deliveries/s`,
      `${fmtRate(run.throughputPerSecond)} (peak ${fmtRate(run.peakDeliveredPerSecond)} in a ${bucket} s bucket); offered ${fmtRate(run.offeredPerSecond)}; latency (received − scheduled) in the Runs table`,
    ],
    [
      `${run.label}: publish`,
      `send delay p99 ${fmtMs(run.sendDelay?.p99)} · accept p50 ${fmtMs(run.acceptLatency?.p50)} p99 ${fmtMs(run.acceptLatency?.p99)} · peak fan-out lag ${fmtInt(lag.peak?.fanout)} · ${fmtInt(ledger.messages.failedAttempts)} attempts failed on purpose or dropped`,
    ],
  ];
}

const brief = (run: RunReport) =>
  `${fmtRate(run.throughputPerSecond)} deliveries/s, p50 ${fmtMs(run.latency?.p50)}, p99 ${fmtMs(run.latency?.p99)}`;

/**
 * e2e: --endpoints endpoints (1,000) of one organization, each subscribed to every type,
 * unordered; every event fans out to all of them, so the figure is fan-out + dispatch (ingest
 * alone is ingest-rest's). With --fail-rate the receiver fails that share of first attempts.
 */
async function runE2e(ctx: ScenarioContext): Promise<ScenarioResult> {
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

export const E2E: Scenario = {
  name: 'e2e',
  summary: 'fan-out to --endpoints endpoints, --rate events/s for --duration s',
  flags: [
    'endpoints',
    'rate',
    'duration',
    'max-in-flight',
    'receiver-latency',
    'fail-rate',
    'fail-status',
    'routing',
  ],
  defaults: { endpoints: 1000, rate: 1, durationSeconds: 20, drainTimeoutSeconds: 90 },
  run: runE2e,
};
