import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { cpus, totalmem } from 'node:os';
import { EndpointBehaviour } from './behaviour';
import { Cleanup } from './cleanup';
import { createEndpoints, EndpointRequest, Tenant } from './hookbase-api';
import { KafkaWatch } from './kafka-watch';
import { Ledger, LedgerSink } from './ledger';
import { BenchOptions, ScenarioOptions } from './options';
import { checkOrder } from './order';
import { Progress } from './progress';
import { BenchReceiver } from './receiver';
import { fmtInt, runsTable, servicesTable } from './report';
import { ResultTable, RunReport, ScenarioResult } from './result';
import { ResourceSampler } from './sampler';
import { BenchStack, startBenchStack } from './stack';
import { distribution, ratePerSecond } from './stats';
import { buildTimeline, peakDeliveredPerSecond } from './timeline';
import { now } from './util';

/** What the CLI hands to a scenario. */
export interface ScenarioContext {
  options: BenchOptions;
  progress: Progress;
  cleanup: Cleanup;
  /** Every wait of the scenario ends by then; teardown has its own reserve after it. */
  deadlineMs: number;
}

/** A scenario: its options (declared for the command line) and its run. */
export interface Scenario extends ScenarioOptions {
  run(ctx: ScenarioContext): Promise<ScenarioResult>;
}

let commit: string | undefined;

/** The checkout's commit, read once: the services were built from it when the run began. */
export function gitCommit(): string {
  const read = () => execFileSync('git', ['rev-parse', '--short', 'HEAD'], { stdio: 'pipe' });
  try {
    return (commit ??= read().toString('utf8').trim());
  } catch {
    return (commit = 'unknown');
  }
}

export const machine = (): ScenarioResult['machine'] => ({
  cpus: cpus().length,
  memoryGb: Math.round(totalmem() / 2 ** 30),
  node: process.version,
  platform: `${process.platform}-${process.arch}`,
});

export interface RunWindow {
  label: string;
  /** When the load began (the first event's planned time is at or after it). */
  startMs: number;
  loadEndMs: number;
  offeredPerSecond: number | null;
}

/** One measured run of a delivery scenario, as the scenario declares it. */
export interface DeliveryRunSpec {
  label: string;
  ledger: Ledger;
  /** Events the load plans, for the progress line (null when unknown). */
  planned: number | null;
  offeredPerSecond: number | null;
  /** The load: resolves once its last event is answered. */
  load(): Promise<{ stoppedByDeadline: boolean }>;
  /** Deliveries must settle this long after the load (and by `drainByMs`, when given). */
  drainSeconds: number;
  drainByMs?: number;
  trackOrder?: boolean;
  /** After the drain, before the report: what must end before the next run begins. */
  afterDrain?(): Promise<void>;
}

/**
 * One scenario's machinery around Hookbase: the receiver, the stack, the DLQ watcher feeding the
 * ledgers, the resource sampler and the progress line. Scenarios only create endpoints, drive
 * load and say what their figures mean.
 */
export class BenchSession {
  readonly runId = randomBytes(4).toString('hex');
  readonly receiver = new BenchReceiver();
  readonly startedMs = now();
  receiverUrl = '';
  stack!: BenchStack;
  kafka!: KafkaWatch;
  sampler!: ResourceSampler;
  private readonly endpoints = new Map<string, { index: number; ledger: LedgerSink }>();
  unknownDeadLetters = 0;
  /** DLQ reasons per endpoint index, as Hookbase wrote them (max_attempts, circuit_open, …). */
  private readonly deadLetterReasons = new Map<number, Record<string, number>>();
  private phase = { name: 'setup', detail: () => 'starting', fraction: (): number | null => null };
  private closed = false;

  private constructor(readonly ctx: ScenarioContext) {}

  static async open(ctx: ScenarioContext): Promise<BenchSession> {
    const session = new BenchSession(ctx);
    const { options, progress } = ctx;
    progress.start(() => ({
      phase: session.phase.name,
      elapsedSeconds: (now() - session.startedMs) / 1000,
      fraction: session.phase.fraction(),
      detail: session.phase.detail(),
    }));
    ctx.cleanup.add('bench session', () => session.close());
    session.setPhase('setup', () => 'starting the receiver and Hookbase');
    session.receiverUrl = await session.receiver.start();
    session.stack = await startBenchStack(options, (line) => progress.note(line), ctx.deadlineMs);
    session.kafka = new KafkaWatch(options.brokers, session.stack.topicPrefix, session.runId);
    await session.kafka.start((record) => {
      const endpoint = session.endpoints.get(record.endpointId);
      if (!endpoint) return void session.unknownDeadLetters++;
      endpoint.ledger.deadLettered(record.eventId, endpoint.index);
      const reasons = session.deadLetterReasons.get(endpoint.index) ?? {};
      reasons[record.reason] = (reasons[record.reason] ?? 0) + 1;
      session.deadLetterReasons.set(endpoint.index, reasons);
    });
    session.sampler = new ResourceSampler(session.stack.services, () => session.kafka.lag());
    session.sampler.start();
    return session;
  }

  setPhase(name: string, detail: () => string, fraction: () => number | null = () => null): void {
    this.phase = { name, detail, fraction };
  }

  /**
   * Endpoints of `tenant` at `<origin>/e/<index>` (ids in the order of `indices`), each answering
   * as `behaviour` and counted in `ledger`; the progress line shows how far creation got.
   */
  async addEndpoints(
    tenant: Tenant,
    indices: readonly number[],
    ledger: LedgerSink,
    behaviour: EndpointBehaviour,
    request: Omit<EndpointRequest, 'url'> = {},
    origin = this.receiverUrl,
  ): Promise<string[]> {
    let created = 0;
    const total = indices.length;
    this.setPhase(
      'setup',
      () => `endpoints ${fmtInt(created)}/${fmtInt(total)}`,
      () => created / total,
    );
    const requests = indices.map((i) => ({ url: `${origin}/e/${i}`, ...request }));
    const ids = await createEndpoints(tenant, requests, 16, (done) => (created = done));
    ids.forEach((id, i) => this.addEndpoint(id, indices[i], ledger, behaviour));
    return ids;
  }

  /** Endpoint `index` is `id` in Hookbase, answers as `behaviour`, and is counted in `ledger`. */
  addEndpoint(id: string, index: number, ledger: LedgerSink, behaviour: EndpointBehaviour): void {
    this.endpoints.set(id, { index, ledger });
    this.receiver.route(index, { behaviour, ledger });
  }

  /** Shows ledgers' progress: during load by events scheduled, then by messages settled. */
  watch(name: string, ledgers: readonly Ledger[], plannedEvents: number | null): void {
    const sum = (pick: (p: Ledger['progress']) => number) =>
      ledgers.reduce((total, ledger) => total + pick(ledger.progress), 0);
    this.setPhase(
      name,
      () => {
        const refused = sum((p) => p.refused + p.failed);
        return (
          `events ${fmtInt(sum((p) => p.accepted))}${plannedEvents ? `/${fmtInt(plannedEvents)}` : ''} accepted` +
          ` · delivered ${fmtInt(sum((p) => p.delivered))}/${fmtInt(sum((p) => p.expected))}` +
          ` · dlq ${fmtInt(sum((p) => p.deadLettered))}` +
          (refused > 0 ? ` · refused ${fmtInt(refused)}` : '') +
          ` · lag ${fmtInt(this.sampler.points.at(-1)?.lag?.dispatcher)}`
        );
      },
      () => {
        if (plannedEvents) return sum((p) => p.scheduled) / plannedEvents;
        const expected = sum((p) => p.expected);
        return expected > 0 ? sum((p) => p.delivered + p.deadLettered) / expected : null;
      },
    );
  }

  /** Waits (polling) until every ledger is settled or the deadline passes; false on time out. */
  async drain(ledgers: readonly Ledger[], deadlineMs: number): Promise<boolean> {
    for (;;) {
      if (ledgers.every((ledger) => ledger.isSettled())) return true;
      if (now() > Math.min(deadlineMs, this.ctx.deadlineMs)) return false;
      if (this.stack.exited().length > 0) return false;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /**
   * The loop every delivery scenario shares once its endpoints exist: load → drain (until the
   * ledger settles, polled, bounded) → reconcile (the ledger) → the run's report.
   */
  async deliveryRun(spec: DeliveryRunSpec) {
    const { label, ledger } = spec;
    this.watch(`${label}: load`, [ledger], spec.planned);
    const startMs = now();
    const load = await spec.load();
    const loadEndMs = now();
    this.watch(`${label}: draining`, [ledger], null);
    const drainBy = Math.min(loadEndMs + spec.drainSeconds * 1000, spec.drainByMs ?? Infinity);
    const settled = await this.drain([ledger], drainBy);
    await spec.afterDrain?.();
    const window = { label, startMs, loadEndMs, offeredPerSecond: spec.offeredPerSecond };
    const run = await this.report(window, ledger, spec.trackOrder);
    // The ledger's problems, an unsettled drain, a load cut at its deadline; each labelled.
    const problems = run.ledger.problems.map((p) => `${label}: ${p}`);
    if (!settled) problems.push(`${label}: deliveries did not settle in time after the load`);
    if (load.stoppedByDeadline) problems.push(`${label}: the load stopped at its deadline`);
    return { run, problems, startMs, loadEndMs };
  }

  /** Figures of one run, from its ledger and the samples taken during it. */
  async report(window: RunWindow, ledger: Ledger, trackOrder = false): Promise<RunReport> {
    const endMs = now();
    const deliveries = ledger.deliveries();
    const events = ledger.allEvents();
    const accepted = events.filter((e) => e.outcome === 'accepted');
    const latest = (times: number[]) => times.reduce((max, t) => Math.max(max, t), -Infinity);
    const firstScheduled = events.reduce((min, e) => Math.min(min, e.scheduledAt), Infinity);
    const lastDelivered = latest(deliveries.map((d) => d.deliveredAt));
    const lastAccepted = latest(accepted.map((e) => e.answeredAt));
    const from = Number.isFinite(firstScheduled) ? firstScheduled : window.startMs;
    const timeline = buildTimeline({
      startMs: window.startMs,
      endMs: Number.isFinite(lastDelivered) ? Math.max(lastDelivered, window.loadEndMs) : endMs,
      bucketMs: endMs - window.startMs <= 40_000 ? 500 : 1000,
      accepted: accepted.map((e) => ({
        at: e.answeredAt,
        weight: Math.max(1, e.targets.size),
        latencyMs: e.answeredAt - e.scheduledAt,
      })),
      deliveries: deliveries.map((d) => ({
        at: d.deliveredAt,
        latencyMs: d.deliveredAt - d.scheduledAt,
      })),
    });
    const during = { fromMs: window.startMs, toMs: endMs };
    return {
      label: window.label,
      startSeconds: this.offset(window.startMs),
      loadSeconds: (window.loadEndMs - window.startMs) / 1000,
      offeredPerSecond: window.offeredPerSecond,
      throughputPerSecond: ratePerSecond(deliveries.length, from, lastDelivered),
      peakDeliveredPerSecond: peakDeliveredPerSecond(timeline),
      acceptedPerSecond: ratePerSecond(accepted.length, from, lastAccepted),
      latency: distribution(deliveries.map((d) => d.deliveredAt - d.scheduledAt)),
      sendDelay: distribution(
        events.filter((e) => Number.isFinite(e.sentAt)).map((e) => e.sentAt - e.scheduledAt),
      ),
      acceptLatency: distribution(accepted.map((e) => e.answeredAt - e.sentAt)),
      ledger: ledger.reconcile(),
      order: trackOrder ? checkOrder(ledger.arrivals()) : null,
      lag: { peak: this.sampler.peakLag(during), final: await this.kafka.lag().catch(() => null) },
      services: await this.sampler.usage(during),
      timeline,
    };
  }

  /** DLQ records by reason, for the given endpoints (all when none are given). */
  reasonsFor(endpoints?: readonly number[]): Record<string, number> {
    const total: Record<string, number> = {};
    for (const [index, reasons] of this.deadLetterReasons) {
      if (endpoints && !endpoints.includes(index)) continue;
      for (const [reason, count] of Object.entries(reasons))
        total[reason] = (total[reason] ?? 0) + count;
    }
    return total;
  }

  /**
   * The scenario's result with everything shared filled in: service peaks (read before the
   * services stop), logs, harness load, and the verdict (void on any problem, the shared ones
   * too: a crashed service, dead letters of unknown endpoints, stray requests).
   */
  async result(parts: {
    title: string;
    summary: string;
    headline: [string, string][];
    runs: RunReport[];
    tables?: ResultTable[];
    problems: string[];
    notes?: string[];
    extra?: Record<string, unknown>;
  }): Promise<ScenarioResult> {
    await this.sampler.stop();
    const services = await this.sampler.usage();
    const problems = [...parts.problems];
    const exited = this.stack.exited();
    if (exited.length > 0)
      problems.push(`Hookbase exited: ${exited.join(', ')}\n${this.stack.recentLogs(20)}`);
    if (this.unknownDeadLetters > 0)
      problems.push(`${this.unknownDeadLetters} DLQ records for endpoints this run did not create`);
    if (this.kafka.malformedDeadLetters > 0)
      problems.push(`${this.kafka.malformedDeadLetters} unreadable DLQ records`);
    const { unrouted, malformed } = this.receiver.stats;
    if (unrouted > 0 || malformed > 0)
      problems.push(
        `receiver got ${unrouted} requests for unknown paths and ${malformed} bodies without a sequence number`,
      );
    const { options } = this.ctx;
    const { runs } = parts;
    return {
      scenario: options.scenario,
      status: problems.length > 0 ? 'void' : 'ok',
      title: parts.title,
      startedAt: new Date(this.startedMs).toISOString(),
      durationSeconds: (now() - this.startedMs) / 1000,
      commit: gitCommit(),
      machine: machine(),
      topology: this.stack.topology,
      options: { ...options, databaseUrl: options.databaseUrl.replace(/:[^:@/]+@/, ':***@') },
      summary: parts.summary,
      headline: parts.headline,
      tables: [
        ...(parts.tables ?? []),
        // Runs without messages (ingest with no endpoints) have nothing for this table.
        ...(runs.some((run) => run.ledger.messages.published > 0) ? [runsTable(runs)] : []),
        servicesTable(services),
      ],
      runs,
      services,
      serviceLogs: this.stack.logs.summary(),
      harness: this.sampler.harness(),
      problems,
      notes: parts.notes ?? [],
      extra: {
        receiver: this.receiver.stats,
        kafkaClientErrors: this.kafka.errors,
        deadLetterReasons: this.reasonsFor(),
        // Memory, CPU and lag samples, in seconds since the scenario began (the README plots them).
        resources: this.sampler.points.map(({ at, ...point }) => ({
          t: this.offset(at),
          ...point,
        })),
        ...parts.extra,
      },
      files: null,
    };
  }

  offset(ms: number): number {
    return (ms - this.startedMs) / 1000;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.ctx.progress.stop();
    await this.sampler?.stop().catch(() => undefined);
    await this.kafka?.stop().catch(() => undefined);
    await this.stack?.stop();
    await this.receiver.stop();
  }
}
