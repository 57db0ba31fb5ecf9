import { now } from '../../core/clock';
import { createOrganization, Tenant } from '../../core/hookbase-api';
import { EventPublisher, publishGroupInto } from '../../drivers/ingest-clients';
import { RawProduceResult } from './bounds';
import { IngestTarget, ratio, rawTargetRow, targetVerdict } from './figures';
import { addIngestEndpoints, MeasuredRun, rawBaseline, rawHeadline, settleRuns } from './session';
import { blockRouter, Ledger, SEQ_BLOCK } from '../../core/ledger';
import { BenchEvent, benchPayload, EVENT_TYPE, runClosedLoop } from '../../drivers/publisher';
import { fmtCpu, fmtInt, fmtMs, fmtRate, table } from '../../core/report';
import { ScenarioResult } from '../../core/result';
import { BenchSession, ScenarioContext } from '../../core/session';
import { distribution, Distribution } from '../../core/stats';
import { declareValidatedBenchType } from '../../core/event-type-schema';

/** One step: `concurrency` callers, each sending its next call as soon as the last is answered. */
export interface IngestStep {
  /** As the tables show it, e.g. "500/request, 4 in flight". */
  label: string;
  /** The call, e.g. "POST /v1/events/batch" or "PublishBatch". */
  call: string;
  concurrency: number;
  eventsPerRequest: number;
  publisher: EventPublisher;
}

/** What an HTTP or gRPC ingest scenario drives; the runner does the rest. */
export interface IngestSurface {
  /** For the title, e.g. "POST /v1/events/batch". */
  name: string;
  /** The ingest target for this surface, and what it is called. */
  target: IngestTarget;
  targetName: string;
  /** The steps, in order, built once the tenant (and its API key) exists. */
  steps(tenant: Tenant, session: BenchSession): IngestStep[] | Promise<IngestStep[]>;
  notes?: string[];
}

/** Calls made before step 1 (not counted): connections, the API key cache, the JIT. */
const WARM_UP_EVENTS = 1000;
const WARM_UP_CALLS = 20;

interface StepRun extends MeasuredRun {
  step: IngestStep;
  requests: number;
  /** Answered − sent of every call: for a batch, the latency each of its events saw. */
  requestLatency: Distribution | null;
}

/** Calls before step 1, not counted: connections, the API key cache, the JIT. */
async function warmUp(session: BenchSession, steps: readonly IngestStep[]): Promise<void> {
  session.setPhase('warm-up', () => 'connections, API key cache, JIT');
  const warmed = new Set<string>();
  for (const step of steps) {
    const key = `${step.call}/${step.eventsPerRequest}`;
    if (warmed.has(key)) continue;
    warmed.add(key);
    const calls = Math.max(
      1,
      Math.min(WARM_UP_CALLS, Math.floor(WARM_UP_EVENTS / step.eventsPerRequest)),
    );
    const events = Array.from({ length: step.eventsPerRequest }, () => ({
      eventType: 'bench.warmup',
      payload: { s: -1 },
    }));
    for (let i = 0; i < calls; i++) await step.publisher.publish(events);
  }
}

/** One step: its closed loop for --step-seconds, then its figures. */
async function runStep(
  session: BenchSession,
  step: IngestStep,
  index: number,
  stepCount: number,
  ledger: Ledger,
  targets: ReadonlySet<number>,
): Promise<StepRun> {
  const { options, progress } = session.ctx;
  let seq = index * SEQ_BLOCK;
  const latencies: number[] = [];
  const startMs = now();
  const untilMs = Math.min(startMs + options.stepSeconds * 1000, session.ctx.deadlineMs);
  session.setPhase(
    `step ${index + 1}/${stepCount}: ${step.label}`,
    () =>
      `accepted ${fmtInt(ledger.progress.accepted)} · refused ${fmtInt(ledger.progress.refused + ledger.progress.failed)}`,
    () => (now() - startMs) / (untilMs - startMs),
  );
  await runClosedLoop({
    workers: step.concurrency,
    untilMs,
    send: async () => {
      const at = now();
      const seqs: number[] = [];
      const events: BenchEvent[] = [];
      for (let i = 0; i < step.eventsPerRequest; i++) {
        const mine = seq++;
        ledger.schedule(mine, at, targets, index);
        seqs.push(mine);
        events.push({
          eventType: EVENT_TYPE,
          payload: benchPayload(mine, options.payloadBytes),
        });
      }
      latencies.push(await publishGroupInto(ledger, step.publisher, seqs, events));
    },
  });
  const window = { label: step.label, startMs, loadEndMs: now(), offeredPerSecond: null };
  const run = await session.report(window, ledger);
  const requestLatency = distribution(latencies);
  progress.note(
    `  ${step.label}: ${fmtRate(run.acceptedPerSecond)} accepted events/s, request p50 ${fmtMs(requestLatency?.p50)}, p99 ${fmtMs(requestLatency?.p99)}`,
  );
  return {
    step,
    run,
    ledger,
    window,
    requests: latencies.length,
    requestLatency,
  };
}

/** The report: the best step against the raw produce bound and the target, every step. */
function stepsReport(
  session: BenchSession,
  surface: IngestSurface,
  figures: {
    raw: RawProduceResult;
    done: StepRun[];
    problems: string[];
  },
): Promise<ScenarioResult> {
  const { options } = session.ctx;
  const { raw, done, problems } = figures;
  const steps = done.map((d) => d.step);
  const runs = done.map((d) => d.run);
  const best = done.reduce((a, b) => (b.run.acceptedPerSecond > a.run.acceptedPerSecond ? b : a));
  const verdict = targetVerdict(
    done.map((d) => ({
      label: d.step.label,
      acceptedPerSecond: d.run.acceptedPerSecond,
      p99Ms: d.requestLatency?.p99 ?? null,
    })),
    surface.target,
  );
  const refused = runs.reduce((t, r) => t + r.ledger.events.refused + r.ledger.events.failed, 0);
  const refusals = Object.assign({}, ...runs.map((r) => r.ledger.refusals)) as object;
  return session.result({
    summary:
      `best ${fmtRate(best.run.acceptedPerSecond)} events/s at ${best.step.label} (p99 ${fmtMs(best.requestLatency?.p99)})` +
      ` · raw ${fmtRate(raw.perSecond)}/s · ratio ${ratio(best.run.acceptedPerSecond, raw.perSecond)}` +
      ` · target ${verdict.met ? 'met' : 'missed'}`,
    title: `${surface.name}, ${steps.length} steps of ${options.stepSeconds} s`,
    headline: [
      [
        'best',
        `${fmtRate(best.run.acceptedPerSecond)} accepted events/s at ${best.step.label} (request p99 ${fmtMs(best.requestLatency?.p99)})`,
      ],
      ...rawHeadline(raw, best.run.acceptedPerSecond),
      ...rawTargetRow(surface.target, raw.perSecond),
      [`ingest target (${surface.targetName})`, verdict.text],
      ['accepted', fmtInt(runs.reduce((t, r) => t + r.ledger.events.accepted, 0))],
      [
        'refused or failed',
        `${fmtInt(refused)}${refused > 0 ? ` (${JSON.stringify(refusals)})` : ''}`,
      ],
      [
        'endpoints',
        options.endpoints > 0
          ? `${options.endpoints} (every delivery checked)`
          : 'none (ingest only)',
      ],
    ],
    tables: [
      table('Steps (request latency = answered − sent)', done, [
        ['call', (d) => d.step.call],
        ['events/request', (d) => fmtInt(d.step.eventsPerRequest)],
        ['in flight', (d) => fmtInt(d.step.concurrency)],
        ['requests', (d) => fmtInt(d.requests)],
        ['accepted/s', (d) => fmtRate(d.run.acceptedPerSecond)],
        ['÷ raw', (d) => ratio(d.run.acceptedPerSecond, raw.perSecond)],
        ['refused', (d) => fmtInt(d.run.ledger.events.refused + d.run.ledger.events.failed)],
        ['p50', (d) => fmtMs(d.requestLatency?.p50)],
        ['p95', (d) => fmtMs(d.requestLatency?.p95)],
        ['p99', (d) => fmtMs(d.requestLatency?.p99)],
        ['max', (d) => fmtMs(d.requestLatency?.max)],
        ['Hookbase CPU', (d) => fmtCpu(d.run)],
      ]),
    ],
    runs: done.map((d) => d.run),
    problems,
    notes: [
      'closed loop: each caller sends its next request when the previous one is answered',
      'accepted/s counts events (a batch of 500 accepted is 500), from the ledger, over the step',
      'CPU is of the Hookbase processes over the step (100 % = one core; this machine has 2)',
      ...(options.endpoints === 0
        ? [
            'no endpoints: the ledger checks every publish was answered (there are no messages to deliver)',
          ]
        : []),
      ...(surface.notes ?? []),
    ],
    extra: {
      raw,
      target: { ...surface.target, met: verdict.met, verdict: verdict.text },
      requestLatency: done.map((d) => ({ label: d.step.label, ...d.requestLatency })),
    },
  });
}

/**
 * The ingest scenarios over HTTP and gRPC (ingest-rest, ingest-batch, ingest-grpc): one
 * organization, the raw Kafka produce baseline, a warm-up, then each step for --step-seconds in
 * a closed loop. Per step: accepted events/s (from the ledger: every event is scheduled, sent and
 * answered there, one by one, also inside a batch) and the request latency (answered − sent).
 *
 * By default the organization has no endpoints, so the figure is ingest's alone (the fan-out
 * still reads and records every event); the ledger then checks every publish was answered.
 * `--endpoints N` adds N subscribed endpoints and waits for every delivery after the steps.
 */
export async function runIngestSteps(
  ctx: ScenarioContext,
  surface: IngestSurface,
): Promise<ScenarioResult> {
  const session = await BenchSession.open(ctx);
  let steps: IngestStep[] = [];
  try {
    const tenant = await createOrganization(session.stack, 'free');
    if (ctx.options.validatedSchema) await declareValidatedBenchType(tenant);
    steps = await surface.steps(tenant, session);
    const ledgers = steps.map((step) => new Ledger(step.label));
    const router = blockRouter(ledgers);
    const targets = await addIngestEndpoints(session, tenant, ctx.options.endpoints, router);
    const raw = await rawBaseline(session, [tenant.organizationId]);
    await warmUp(session, steps);
    const done: StepRun[] = [];
    for (const [index, step] of steps.entries())
      done.push(await runStep(session, step, index, steps.length, ledgers[index], targets));
    const problems = await settleRuns(session, done);
    return await stepsReport(session, surface, { raw, done, problems });
  } finally {
    for (const publisher of new Set(steps.map((step) => step.publisher)))
      await publisher.close().catch(() => undefined);
    await session.close();
  }
}
