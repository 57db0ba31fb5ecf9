import { declareValidatedBenchType } from '../../core/event-type-schema';
import { HEALTHY } from '../../core/behaviour';
import { createOrganization, Tenant } from '../../core/hookbase-api';
import { blockRouter, Ledger, LedgerSink, SEQ_BLOCK } from '../../core/ledger';
import { fmtCpu, fmtInt, fmtMs, fmtRate, fmtRatio, table } from '../../core/report';
import { RunReport, ScenarioResult } from '../../core/result';
import { BenchSession, RunWindow, Scenario, ScenarioContext } from '../../core/session';
import { distribution, Distribution } from '../../core/stats';
import { freeLoopbackPort, now } from '../../core/util';
import { GrpcIngestClient } from '../../drivers/grpc-ingest-client';
import { EventPublisher, IngestClient, publishGroupInto } from '../../drivers/ingest-clients';
import { benchPayload, EVENT_TYPE, runClosedLoop } from '../../drivers/publisher';
import { BoundRun, measureBound, startBareServer } from './bare-http';
import { rawBaseline, rawHeadline } from './bounds';
import { IngestTarget, targetVerdict, TARGETS } from './figures';

/** `count` subscribed endpoints of the tenant, numbered from `first`; their indexes. */
export async function addIngestEndpoints(
  session: BenchSession,
  tenant: Tenant,
  count: number,
  sink: LedgerSink,
  first = 0,
): Promise<Set<number>> {
  const indexes = Array.from({ length: count }, (_, i) => first + i);
  await session.addEndpoints(tenant, indexes, sink, HEALTHY);
  return new Set(indexes);
}

/** A run as measured when its load ended, with what is needed to measure it again. */
export interface MeasuredRun {
  run: RunReport;
  ledger: Ledger;
  window: RunWindow;
}

/**
 * After the load: with endpoints, waits until every message is delivered or dead-lettered, then
 * measures each run's deliveries again, keeping what was measured of the load itself (rates,
 * CPU). Returns the problems that void the run, each labelled with its run.
 */
export async function settleRuns(
  session: BenchSession,
  measured: readonly MeasuredRun[],
): Promise<string[]> {
  const { options } = session.ctx;
  const problems: string[] = [];
  if (options.endpoints > 0) {
    const ledgers = measured.map((m) => m.ledger);
    session.watch('draining', ledgers, null);
    if (!(await session.drain(ledgers, now() + options.drainTimeoutSeconds * 1000)))
      problems.push(`deliveries did not settle within ${options.drainTimeoutSeconds} s`);
    for (const { run, ledger, window } of measured) {
      const again = await session.report(window, ledger);
      const { throughputPerSecond, peakDeliveredPerSecond, latency, timeline } = again;
      Object.assign(run, { ledger: again.ledger, throughputPerSecond, peakDeliveredPerSecond });
      Object.assign(run, { latency, timeline });
    }
  }
  for (const { run } of measured)
    problems.push(...run.ledger.problems.map((p) => `${run.label}: ${p}`));
  return problems;
}

/** One step: `concurrency` callers, each sending its next call as soon as the last is answered. */
interface IngestStep {
  /** As the tables show it, e.g. "500/req ×4". */
  label: string;
  call: string;
  concurrency: number;
  eventsPerRequest: number;
  publisher: EventPublisher;
}

/** What an ingest surface declares; the step runner does the rest. */
interface IngestSurface {
  name: string;
  target: IngestTarget;
  targetName: string;
  steps(tenant: Tenant, session: BenchSession): IngestStep[];
  /**
   * A client of the step's kind aimed at the bare HTTP server, for each step's bare HTTP bound;
   * a surface without one (gRPC) has no such bound.
   */
  boundPublisher?(url: string, step: IngestStep): EventPublisher;
  /** The steps the target judges (all when absent). */
  judged?(step: IngestStep): boolean;
  notes?: string[];
}

/** Each step's bare HTTP bound runs this long at most (--step-seconds when shorter). */
const BOUND_SECONDS = 3;

/**
 * The bare HTTP bound of each step (bare-http.ts), measured before the steps while Hookbase is
 * idle: one bare server, and for each step a fresh client of the step's kind, at its concurrency
 * and events per request.
 */
async function measureBareBounds(
  session: BenchSession,
  steps: readonly IngestStep[],
  boundPublisher: NonNullable<IngestSurface['boundPublisher']>,
): Promise<Map<IngestStep, BoundRun>> {
  const { options, progress, deadlineMs } = session.ctx;
  const bounds = new Map<IngestStep, BoundRun>();
  const server = await startBareServer();
  try {
    for (const [index, step] of steps.entries()) {
      const seconds = Math.min(BOUND_SECONDS, options.stepSeconds, (deadlineMs - now()) / 1000);
      if (seconds <= 0) break;
      session.setPhase(`bare HTTP bound ${index + 1}/${steps.length}: ${step.label}`, () => '');
      const publisher = boundPublisher(server.url, step);
      try {
        const { concurrency, eventsPerRequest } = step;
        const { payloadBytes } = options;
        const bound = await measureBound({
          publisher,
          concurrency,
          eventsPerRequest,
          payloadBytes,
          seconds,
        });
        bounds.set(step, bound);
        progress.note(`  bare HTTP bound, ${step.label}: ${fmtRate(bound.perSecond)} events/s`);
      } finally {
        await publisher.close().catch(() => undefined);
      }
    }
  } finally {
    await server.stop();
  }
  return bounds;
}

interface StepRun extends MeasuredRun {
  step: IngestStep;
  requests: number;
  /** Answered − sent of every call: for a batch, the latency each of its events saw. */
  requestLatency: Distribution | null;
  /** The step's bare HTTP bound, when its surface has one. */
  bare: BoundRun | null;
}

/** Calls before step 1, not counted: connections, the API key cache, the JIT. */
async function warmUp(session: BenchSession, steps: readonly IngestStep[]): Promise<void> {
  session.setPhase('warm-up', () => 'connections, API key cache, JIT');
  const kinds = new Map(steps.map((step) => [`${step.call}/${step.eventsPerRequest}`, step]));
  for (const { eventsPerRequest, publisher } of kinds.values()) {
    const events = Array.from({ length: eventsPerRequest }, () => ({
      eventType: 'bench.warmup',
      payload: { s: -1 },
    }));
    const calls = Math.max(1, Math.min(20, Math.floor(1000 / eventsPerRequest)));
    for (let i = 0; i < calls; i++) await publisher.publish(events);
  }
}

/** One step: its closed loop for --step-seconds, then its figures. */
async function runStep(
  session: BenchSession,
  step: IngestStep,
  index: number,
  ledger: Ledger,
  targets: ReadonlySet<number>,
  bare: BoundRun | null,
): Promise<StepRun> {
  const { options, progress, deadlineMs } = session.ctx;
  let seq = index * SEQ_BLOCK;
  const latencies: number[] = [];
  const startMs = now();
  const untilMs = Math.min(startMs + options.stepSeconds * 1000, deadlineMs);
  const p = () => ledger.progress;
  session.setPhase(
    `step ${index + 1}: ${step.label}`,
    () => `accepted ${fmtInt(p().accepted)} · refused ${fmtInt(p().refused + p().failed)}`,
    () => (now() - startMs) / (untilMs - startMs),
  );
  await runClosedLoop({
    workers: step.concurrency,
    untilMs,
    send: async () => {
      const at = now();
      const seqs = Array.from({ length: step.eventsPerRequest }, () => seq++);
      for (const s of seqs) ledger.schedule(s, at, targets);
      const payload = (s: number) => benchPayload(s, options.payloadBytes);
      const events = seqs.map((s) => ({ eventType: EVENT_TYPE, payload: payload(s) }));
      latencies.push(await publishGroupInto(ledger, step.publisher, seqs, events));
    },
  });
  const window = { label: step.label, startMs, loadEndMs: now(), offeredPerSecond: null };
  const run = await session.report(window, ledger);
  const requestLatency = distribution(latencies);
  progress.note(
    `  ${step.label}: ${fmtRate(run.acceptedPerSecond)} accepted events/s, request p50 ${fmtMs(requestLatency?.p50)}, p99 ${fmtMs(requestLatency?.p99)}`,
  );
  return { step, run, ledger, window, requests: latencies.length, requestLatency, bare };
}

/**
 * The ingest scenarios over HTTP and gRPC: setup (one organization, optional endpoints, the raw
 * Kafka produce bound, a warm-up) → load (each step for --step-seconds in a closed loop) → drain
 * (with endpoints) → reconcile (the ledger: every event scheduled, sent and answered, one by one,
 * also inside a batch) → report (per step: accepted events/s and request latency; the best step
 * against the raw bound and the target).
 */
async function runIngestSteps(
  ctx: ScenarioContext,
  surface: IngestSurface,
): Promise<ScenarioResult> {
  const { options } = ctx;
  const session = await BenchSession.open(ctx);
  let steps: IngestStep[] = [];
  try {
    const tenant = await createOrganization(session.stack, 'free');
    if (options.validatedSchema) await declareValidatedBenchType(tenant);
    steps = surface.steps(tenant, session);
    const ledgers = steps.map((step) => new Ledger(step.label));
    const { endpoints } = options;
    const targets = await addIngestEndpoints(session, tenant, endpoints, blockRouter(ledgers));
    const raw = await rawBaseline(session, [tenant.organizationId]);
    const bare = surface.boundPublisher
      ? await measureBareBounds(session, steps, surface.boundPublisher)
      : new Map<IngestStep, BoundRun>();
    await warmUp(session, steps);
    const done: StepRun[] = [];
    for (const [index, step] of steps.entries())
      done.push(
        await runStep(session, step, index, ledgers[index], targets, bare.get(step) ?? null),
      );
    const problems = await settleRuns(session, done);
    for (const { step, bare: bound } of done)
      if (bound && bound.unanswered > 0)
        problems.push(
          `bare HTTP bound, ${step.label}: ${fmtInt(bound.unanswered)} events unanswered`,
        );

    const runs = done.map((d) => d.run);
    const rate = (d: StepRun) => d.run.acceptedPerSecond;
    const best = done.reduce((a, b) => (rate(b) > rate(a) ? b : a));
    const { target } = surface;
    const verdict = targetVerdict(
      done
        .filter((d) => surface.judged?.(d.step) ?? true)
        .map((d) => ({
          label: d.step.label,
          acceptedPerSecond: rate(d),
          p99Ms: d.requestLatency?.p99 ?? null,
          boundPerSecond:
            target.bound === 'bare HTTP' ? (d.bare?.perSecond ?? null) : raw.perSecond,
        })),
      target,
    );
    const bareAtBest = best.bare
      ? ` · ÷ bare HTTP ${fmtRatio(rate(best), best.bare.perSecond)}`
      : '';
    const count = (pick: (e: RunReport['ledger']['events']) => number) =>
      fmtInt(runs.reduce((t, r) => t + pick(r.ledger.events), 0));
    const refusals = Object.assign({}, ...runs.map((r) => r.ledger.refusals)) as object;
    const bestAt = `${best.step.label} (request p99 ${fmtMs(best.requestLatency?.p99)})`;
    return await session.result({
      summary: `best ${fmtRate(rate(best))} events/s at ${bestAt} · raw ${fmtRate(raw.perSecond)}/s · ratio ${fmtRatio(rate(best), raw.perSecond)}${bareAtBest} · target ${verdict.met ? 'met' : 'missed'}`,
      title: `${surface.name}, ${steps.length} steps of ${options.stepSeconds} s`,
      headline: [
        ['best', `${fmtRate(rate(best))} accepted events/s at ${bestAt}`],
        ...rawHeadline(raw, rate(best)),
        ...(best.bare
          ? ([
              [
                'bare HTTP bound',
                `${fmtRate(best.bare.perSecond)} events/s at the same step (p99 ${fmtMs(best.bare.p99Ms)}): node:http in its own process parsing each body and answering, nothing else, while Hookbase was idle`,
              ],
              ['accepted ÷ bare HTTP', fmtRatio(rate(best), best.bare.perSecond)],
            ] as [string, string][])
          : []),
        [`ingest target (${surface.targetName})`, verdict.text],
        [
          'accepted, refused or failed',
          `${count((e) => e.accepted)}, ${count((e) => e.refused + e.failed)} ${Object.keys(refusals).length > 0 ? JSON.stringify(refusals) : ''}`,
        ],
        [
          'endpoints',
          endpoints > 0 ? `${endpoints} (every delivery checked)` : 'none (ingest only)',
        ],
      ],
      tables: [
        table('Steps (request latency = answered − sent)', done, [
          ['call', (d) => d.step.call],
          ['events/request', (d) => fmtInt(d.step.eventsPerRequest)],
          ['in flight', (d) => fmtInt(d.step.concurrency)],
          ['requests', (d) => fmtInt(d.requests)],
          ['accepted/s', (d) => fmtRate(d.run.acceptedPerSecond)],
          ['÷ raw', (d) => fmtRatio(d.run.acceptedPerSecond, raw.perSecond)],
          bare.size > 0 && ['bare HTTP/s', (d) => fmtRate(d.bare?.perSecond)],
          bare.size > 0 && ['÷ bare', (d) => fmtRatio(d.run.acceptedPerSecond, d.bare?.perSecond)],
          ['refused', (d) => fmtInt(d.run.ledger.events.refused + d.run.ledger.events.failed)],
          ['p50', (d) => fmtMs(d.requestLatency?.p50)],
          ['p95', (d) => fmtMs(d.requestLatency?.p95)],
          ['p99', (d) => fmtMs(d.requestLatency?.p99)],
          ['max', (d) => fmtMs(d.requestLatency?.max)],
          ['Hookbase CPU', (d) => fmtCpu(d.run)],
        ]),
      ],
      runs,
      problems,
      notes: [
        'closed loop: each caller sends its next request when the previous one is answered',
        'accepted/s counts events (a batch of 500 accepted is 500); CPU: Hookbase over the step',
        ...(bare.size > 0
          ? [
              "bare HTTP/s: a node:http server in its own process that only parses each body and answers, driven by the step's kind of client at its concurrency before the steps, while Hookbase was idle (a ceiling, like raw produce)",
            ]
          : []),
        ...(surface.notes ?? []),
      ],
      extra: {
        raw,
        target: { ...surface.target, ...verdict },
        requestLatency: done.map((d) => d.requestLatency),
        bareHttpBound: done.map((d) => ({ label: d.step.label, ...d.bare })),
      },
    });
  } finally {
    for (const publisher of new Set(steps.map((step) => step.publisher)))
      await publisher.close().catch(() => undefined);
    await session.close();
  }
}

const INGEST_DEFAULTS = { endpoints: 0, records: 100_000 };
const SHARED_FLAGS = ['step-seconds', 'endpoints', 'records', 'batch'] as const;

/** A step per events-per-call size and per number of calls in flight, labelled by `label`. */
const stepsOf = (
  call: string,
  publisher: EventPublisher,
  sizes: readonly number[],
  inFlight: readonly number[],
  label: (size: number, concurrency: number) => string,
): IngestStep[] =>
  sizes.flatMap((eventsPerRequest) =>
    inFlight.map((concurrency) => {
      const named = label(eventsPerRequest, concurrency);
      return { label: named, call, concurrency, eventsPerRequest, publisher };
    }),
  );

/** ingest-rest: single-event `POST /v1/events` at --steps requests in flight. */
export const INGEST_REST: Scenario = {
  name: 'ingest-rest',
  summary: 'POST /v1/events, one event per request, at rising concurrency (--steps)',
  flags: ['steps', 'validated-schema', ...SHARED_FLAGS],
  defaults: INGEST_DEFAULTS,
  run: (ctx) =>
    runIngestSteps(ctx, {
      name: 'POST /v1/events, one event per request',
      target: TARGETS.single,
      targetName: 'single-event REST',
      steps: (tenant, session) => {
        const { steps } = ctx.options;
        const client = new IngestClient(session.stack.ingestUrl, tenant.apiKey, Math.max(...steps));
        return stepsOf('POST /v1/events', client, [1], steps, (_, n) => `${n} in flight`);
      },
      boundPublisher: (url, step) => new IngestClient(url, 'bare', step.concurrency),
    }),
};

/**
 * ingest-batch: `POST /v1/events/batch` with --batch-sizes events per request (500 is the most
 * HOOKBASE_MAX_BATCH_EVENTS allows by default), each at --batch-steps requests in flight.
 */
export const INGEST_BATCH: Scenario = {
  name: 'ingest-batch',
  summary: 'POST /v1/events/batch: --batch-sizes events per request at --batch-steps in flight',
  flags: ['batch-sizes', 'batch-steps', ...SHARED_FLAGS],
  defaults: INGEST_DEFAULTS,
  run: (ctx) =>
    runIngestSteps(ctx, {
      name: `POST /v1/events/batch, ${ctx.options.batchSizes.join(' and ')} events per request`,
      target: TARGETS.batch,
      targetName: 'batch REST',
      steps: (tenant, session) => {
        const { batchSizes, batchSteps } = ctx.options;
        const { ingestUrl } = session.stack;
        const client = new IngestClient(ingestUrl, tenant.apiKey, Math.max(...batchSteps), true);
        const label = (size: number, n: number) => `${size}/req ×${n}`;
        return stepsOf('POST /v1/events/batch', client, batchSizes, batchSteps, label);
      },
      boundPublisher: (url, step) => new IngestClient(url, 'bare', step.concurrency, true),
      notes: [
        '"500/req ×4" is 500 events per request, 4 requests in flight',
        'a batch request answers 207 with one result per event; each counts on its own',
      ],
    }),
};

/**
 * ingest-grpc: `hookbase.v1.Ingest` with a @grpc/grpc-js client built from the repository's
 * .proto: `Publish` at --steps calls in flight, then `PublishBatch` as ingest-batch. The started
 * stack gets a free gRPC port of its own unless --stack-env HOOKBASE_GRPC_PORT names one.
 */
export const INGEST_GRPC: Scenario = {
  name: 'ingest-grpc',
  summary: 'gRPC hookbase.v1.Ingest: Publish at --steps, PublishBatch as ingest-batch',
  flags: ['steps', 'batch-sizes', 'batch-steps', ...SHARED_FLAGS],
  defaults: INGEST_DEFAULTS,
  run: async (context) => {
    const asked = Number(context.options.stackEnv.HOOKBASE_GRPC_PORT ?? 0);
    if (asked < 0)
      throw new Error('ingest-grpc needs gRPC ingest: HOOKBASE_GRPC_PORT=-1 turns it off');
    const address = `127.0.0.1:${asked > 0 ? asked : await freeLoopbackPort()}`;
    const stackEnv = { ...context.options.stackEnv, HOOKBASE_GRPC_PORT: address.split(':')[1] };
    const ctx = { ...context, options: { ...context.options, stackEnv } };
    const { steps, batchSizes, batchSteps } = ctx.options;
    return runIngestSteps(ctx, {
      name: `gRPC hookbase.v1.Ingest at ${address}: Publish, PublishBatch of ${batchSizes.join(' and ')}`,
      target: TARGETS.batch,
      targetName: 'gRPC PublishBatch, as batch REST',
      judged: (step) => step.call === 'PublishBatch',
      steps: (tenant) => {
        const client = new GrpcIngestClient(address, tenant.apiKey);
        const batchLabel = (size: number, n: number) => `Batch ${size} ×${n}`;
        return [
          ...stepsOf('Publish', client.publishEach, [1], steps, (_, n) => `Publish ×${n}`),
          ...stepsOf('PublishBatch', client.publishBatch, batchSizes, batchSteps, batchLabel),
        ];
      },
      notes: [
        '"Publish ×8" is 8 calls in flight; "Batch 500 ×4" is PublishBatch of 500 events, 4 calls in flight',
        'one gRPC channel (one HTTP/2 connection) carries every call in flight',
        'the target line judges the PublishBatch steps against raw produce, as batch REST; Publish steps are in the table',
      ],
    });
  },
};
