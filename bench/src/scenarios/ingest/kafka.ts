import { Kafka, logLevel, Message, Partitioners, Producer } from 'kafkajs';
import { now } from '../../core/clock';
import { benchEnvelope } from '../../drivers/envelope';
import { PendingOffsets, ProducedRecord, SpreadPicker } from '../../drivers/fanout-offsets';
import { createOrganization, Tenant } from '../../core/hookbase-api';
import { ratio } from './figures';
import { addIngestEndpoints, MeasuredRun, rawBaseline, rawHeadline, settleRuns } from './session';
import { blockOf, blockRouter, Ledger, SEQ_BLOCK } from '../../core/ledger';
import { dueAt, dueBy, PacingPlan, planEvents } from '../../core/pacing';
import { partitionFor } from '../../partitioner';
import { fmtCpu, fmtInt, fmtMs, fmtRate, table } from '../../core/report';
import { RunReport, ScenarioResult } from '../../core/result';
import { BenchOptions } from '../../core/options';
import { RawProduceResult } from './bounds';
import { BenchSession, ScenarioContext } from '../../core/session';
import { distribution, Distribution, ratePerSecond } from '../../core/stats';
import { Scenario } from '../../core/scenario';

interface Organization {
  tenant: Tenant;
  partition: number;
  /** Endpoint indexes its events are addressed to (none by default). */
  targets: ReadonlySet<number>;
}

/** How often the fan-out's committed offsets are read: the resolution of "accepted at". */
const COMMIT_POLL_MS = 25;

/** Candidates tried per organization wanted before settling for an uneven spread. */
const ORGANIZATION_TRIES = 10;

/**
 * Creates organizations through the admin API and keeps those that spread `wanted` of them over
 * the partitions of `<prefix>.events` as evenly as possible (each organization's events go to the
 * one partition its id hashes to, so one organization alone would use one partition).
 */
async function spreadOrganizations(
  session: BenchSession,
  partitions: number,
  wanted: number,
): Promise<{ tenants: { tenant: Tenant; partition: number }[]; covered: number }> {
  const picker = new SpreadPicker(partitions, wanted);
  const tenants: { tenant: Tenant; partition: number }[] = [];
  for (let tries = 0; !picker.done && tries < wanted * ORGANIZATION_TRIES + 20; tries++) {
    const tenant = await createOrganization(session.stack, 'free');
    const partition = partitionFor(tenant.organizationId, partitions);
    if (picker.offer(partition)) tenants.push({ tenant, partition });
  }
  return { tenants, covered: picker.covered };
}

interface Outgoing {
  seq: number;
  eventId: string;
  organization: Organization;
  message: Message;
}

interface PhaseFigures extends MeasuredRun {
  label: string;
  events: number;
  producedPerSecond: number;
  /** Fan-out commit seen − scheduled, for every accepted event. */
  latency: Distribution | null;
}

/** What setup found: the raw bound, the spread of organizations, the invalid topic's count. */
interface SetupFigures {
  raw: RawProduceResult;
  partitions: number;
  covered: number;
  invalidBefore: number;
}

/** What reconcile found after the load. */
interface Checks {
  problems: string[];
  /** Records set aside on `<prefix>.events.invalid` during the run (null: unreadable). */
  invalid: number | null;
  /** Organizations whose last accepted event the API found. */
  found: number;
}

/**
 * One run of ingest-kafka: the direct producer, the fan-out's commit watch, the two phases'
 * ledgers. Its steps are the scenario's: setUp, burst, paced, reconcile, report.
 */
class IngestKafkaRun {
  private readonly options: BenchOptions;
  private readonly eventsTopic: string;
  private readonly producer: Producer;
  private stopCommits: () => Promise<void> = async () => undefined;
  private readonly ledgers = [new Ledger('burst'), new Ledger('paced')];
  private readonly pending = new PendingOffsets();
  private readonly phases: PhaseFigures[] = [];
  private readonly runs: RunReport[] = [];
  private organizations: Organization[] = [];
  private produced = 0;

  constructor(private readonly session: BenchSession) {
    this.options = session.ctx.options;
    const prefix = session.stack.topicPrefix;
    this.eventsTopic = `${prefix}.events`;
    const kafka = new Kafka({
      clientId: 'hookbase-bench-direct',
      brokers: this.options.brokers.split(','),
      logLevel: logLevel.NOTHING,
    });
    // As a direct producer should be set up (and as Hookbase's own producer is).
    this.producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      createPartitioner: Partitioners.DefaultPartitioner,
      allowAutoTopicCreation: false,
    });
  }

  async stopClients(): Promise<void> {
    await this.stopCommits().catch(() => undefined);
    await this.producer.disconnect().catch(() => undefined);
  }

  /**
   * Setup: organizations spread over the partitions (with their endpoints, if any), the raw
   * produce bound keyed as they are, the commit watch, and one warm-up record per organization
   * (not counted), so connection set-up is not measured.
   */
  async setUp(): Promise<SetupFigures> {
    const { session, options } = this;
    const partitions = await session.kafka.partitionCount(this.eventsTopic);
    session.setPhase('setup', () => `organizations over ${partitions} partitions`);
    const spread = await spreadOrganizations(session, partitions, options.organizations);
    const router = blockRouter(this.ledgers);
    for (const [i, { tenant, partition }] of spread.tenants.entries()) {
      const first = i * options.endpoints;
      const targets = await addIngestEndpoints(session, tenant, options.endpoints, router, first);
      this.organizations.push({ tenant, partition, targets });
    }
    const raw = await rawBaseline(
      session,
      this.organizations.map((o) => o.tenant.organizationId),
    );
    const group = `${session.stack.topicPrefix}.fanout`;
    this.stopCommits = session.kafka.pollCommits(
      group,
      this.eventsTopic,
      COMMIT_POLL_MS,
      (partition, committed, at) => {
        for (const record of this.pending.passed(partition, committed))
          this.ledgers[blockOf(record.seq)]?.accepted(record.seq, at, record.eventId);
      },
    );
    const invalidBefore = await session.kafka.highWatermarks(`${this.eventsTopic}.invalid`);
    await this.producer.connect();
    await this.producer.send({
      topic: this.eventsTopic,
      acks: -1,
      messages: this.organizations.map((o) => {
        const record = benchEnvelope(o.tenant.organizationId, -1, 0);
        return { key: record.key, value: record.value, partition: o.partition };
      }),
    });
    return { raw, partitions, covered: spread.covered, invalidBefore };
  }

  /** Burst: --events envelopes (built beforehand) as fast as one send in flight allows. */
  async burst(): Promise<RunReport> {
    const { session, options } = this;
    const ledger = this.ledgers[0];
    session.setPhase('burst', () => `building ${fmtInt(options.events)} envelopes`);
    const items: Outgoing[] = [];
    while (items.length < options.events) {
      // In slices, so the commit watch and the progress line keep running meanwhile.
      const end = Math.min(options.events, items.length + 5000);
      for (let seq = items.length; seq < end; seq++) items.push(this.build(seq));
      await new Promise((resolve) => setImmediate(resolve));
    }
    const startMs = now();
    session.setPhase(
      'burst',
      () =>
        `produced ${fmtInt(this.produced)}/${fmtInt(options.events)} · fan-out accepted ${fmtInt(ledger.progress.accepted)}`,
      () => ledger.progress.accepted / options.events,
    );
    for (let next = 0; next < items.length && now() < session.ctx.deadlineMs;) {
      const slice = items.slice(next, next + options.batch);
      const at = now();
      await this.send(ledger, slice, () => at);
      next += slice.length;
    }
    const producedMs = now();
    await this.settled(ledger, now() + options.drainTimeoutSeconds * 1000);
    return this.finishPhase('burst', ledger, startMs, producedMs);
  }

  /** Paced: an open loop at `rate`, one the fan-out keeps up with, for its latency. */
  async paced(rate: number): Promise<void> {
    const { session, options } = this;
    const ledger = this.ledgers[1];
    const plan: PacingPlan = {
      startMs: now(),
      ratePerSecond: rate,
      count: planEvents(rate, options.durationSeconds),
    };
    session.setPhase(
      `paced at ${fmtRate(rate)}/s`,
      () =>
        `produced ${fmtInt(ledger.progress.sent)}/${fmtInt(plan.count)} · fan-out accepted ${fmtInt(ledger.progress.accepted)}`,
      () => ledger.progress.accepted / plan.count,
    );
    // Every few milliseconds, what is due goes out as one send (at most --batch records).
    for (let next = 0; next < plan.count && now() < session.ctx.deadlineMs;) {
      const due = Math.min(dueBy(plan, now()), next + options.batch);
      if (due <= next) {
        await new Promise((resolve) => setTimeout(resolve, 2));
        continue;
      }
      await this.send(
        ledger,
        Array.from({ length: due - next }, (_, i) => this.build(SEQ_BLOCK + next + i)),
        (seq) => dueAt(plan, seq - SEQ_BLOCK),
      );
      next = due;
    }
    const producedMs = now();
    await this.settled(ledger, now() + options.drainTimeoutSeconds * 1000);
    await this.finishPhase(`paced ${fmtRate(rate)}/s`, ledger, plan.startMs, producedMs);
  }

  /**
   * Reconcile: deliveries settled (with endpoints), nothing set aside as invalid, and the last
   * accepted event of each organization found through the API (the fan-out's commit is the
   * measure; the API confirms it recorded what it committed).
   */
  async reconcile(setup: SetupFigures): Promise<Checks> {
    const topic = `${this.eventsTopic}.invalid`;
    const invalidNow = await this.session.kafka.highWatermarks(topic).catch(() => null);
    await this.stopCommits();
    const problems = await settleRuns(this.session, this.phases);
    const invalid = invalidNow === null ? null : invalidNow - setup.invalidBefore;
    if (invalid === null) problems.push(`could not read ${topic}`);
    else if (invalid > 0) problems.push(`${invalid} records were set aside as invalid`);
    let found = 0;
    for (const [index, organization] of this.organizations.entries()) {
      const id = lastAcceptedOf(this.ledgers, this.organizations.length, index);
      if (!id) continue;
      const { tenant } = organization;
      const response = await tenant.client.get(
        `/api/organizations/${tenant.organizationId}/events/${id}`,
      );
      if (response.status === 200) found++;
      else
        problems.push(`event ${id} committed by the fan-out but GET answered ${response.status}`);
    }
    return { problems, invalid, found };
  }

  /** Report: the fan-out's accepted rate, the paced latency, the raw bound and the checks. */
  report(setup: SetupFigures, checks: Checks, rate: number): Promise<ScenarioResult> {
    const { options, eventsTopic, phases } = this;
    const { raw } = setup;
    const count = this.organizations.length;
    const [best, pacedPhase] = phases;
    return this.session.result({
      title: `${fmtInt(options.events)} envelopes straight onto ${eventsTopic}, then paced at ${fmtRate(rate)}/s for ${options.durationSeconds} s, ${count} organizations`,
      summary:
        `fan-out accepted ${fmtRate(best.run.acceptedPerSecond)} events/s (produced ${fmtRate(best.producedPerSecond)}/s)` +
        ` · raw ${fmtRate(raw.perSecond)}/s · ratio ${ratio(best.run.acceptedPerSecond, raw.perSecond)}` +
        (pacedPhase ? ` · paced p99 ${fmtMs(pacedPhase.latency?.p99)}` : ''),
      headline: [
        [
          'fan-out accepted',
          `${fmtRate(best.run.acceptedPerSecond)} events/s (burst of ${fmtInt(best.events)}; produced onto ${eventsTopic} at ${fmtRate(best.producedPerSecond)} records/s; ${
            best.run.acceptedPerSecond >= 0.95 * best.producedPerSecond
              ? 'the fan-out kept up, so this is the producer’s rate, a lower bound of the fan-out’s'
              : 'the fan-out fell behind, so this is its capacity'
          }, peak fan-out lag ${fmtInt(best.run.lag.peak?.fanout)})`,
        ],
        [
          'latency when paced',
          pacedPhase
            ? `at ${fmtRate(rate)} events/s: p50 ${fmtMs(pacedPhase.latency?.p50)}, p95 ${fmtMs(pacedPhase.latency?.p95)}, p99 ${fmtMs(pacedPhase.latency?.p99)} (fan-out commit seen − planned time)`
            : 'not run (nothing accepted in the burst)',
        ],
        ...rawHeadline(raw, best.run.acceptedPerSecond),
        [
          'produced ÷ raw',
          `${ratio(best.producedPerSecond, raw.perSecond)} (the direct producer while the fan-out read beside it)`,
        ],
        [
          'organizations',
          `${count}, on ${setup.covered} of ${setup.partitions} partitions of ${eventsTopic}`,
        ],
        [
          'checks',
          `${checks.invalid ?? '?'} records set aside as invalid; the last accepted event of ${checks.found}/${count} organizations found through the API`,
        ],
        [
          'endpoints',
          options.endpoints > 0
            ? `${options.endpoints} per organization (every delivery checked)`
            : 'none (the fan-out records each event, no messages)',
        ],
      ],
      tables: [
        table('Phases (latency = fan-out commit seen − planned time)', phases, [
          ['phase', (p) => p.label],
          ['events', (p) => fmtInt(p.events)],
          ['produced/s', (p) => fmtRate(p.producedPerSecond)],
          ['accepted/s', (p) => fmtRate(p.run.acceptedPerSecond)],
          ['÷ raw', (p) => ratio(p.run.acceptedPerSecond, raw.perSecond)],
          ['p50', (p) => fmtMs(p.latency?.p50)],
          ['p95', (p) => fmtMs(p.latency?.p95)],
          ['p99', (p) => fmtMs(p.latency?.p99)],
          ['max', (p) => fmtMs(p.latency?.max)],
          ['peak fan-out lag', (p) => fmtInt(p.run.lag.peak?.fanout)],
          ['Hookbase CPU', (p) => fmtCpu(p.run)],
        ]),
      ],
      runs: this.runs,
      problems: checks.problems,
      notes: [
        `accepted = the fan-out group's committed offset on ${eventsTopic} passed the record (read every 25 ms): it commits only after the event and its messages are in PostgreSQL`,
        'burst latency is mostly waiting behind the burst; the paced phase is the latency figure',
        `raw produce: the same client and settings to a scratch topic, nothing reading it`,
      ],
      extra: { raw, organizations: count, partitionsCovered: setup.covered },
    });
  }

  /** One envelope, built before it is due, so building is not counted as producing. */
  private build(seq: number): Outgoing {
    const organization = this.organizations[seq % this.organizations.length];
    const record = benchEnvelope(
      organization.tenant.organizationId,
      seq,
      this.options.payloadBytes,
    );
    // The partition the key hashes to, named so the offsets below are known for certain.
    const message = { key: record.key, value: record.value, partition: organization.partition };
    return { seq, eventId: record.eventId, organization, message };
  }

  /** Sends envelopes as one produce request and files them under the offsets Kafka gave. */
  private async send(
    ledger: Ledger,
    items: readonly Outgoing[],
    scheduledAt: (seq: number) => number,
  ): Promise<void> {
    const byPartition = new Map<number, Omit<ProducedRecord, 'offset'>[]>();
    for (const { seq, eventId, organization } of items) {
      ledger.schedule(seq, scheduledAt(seq), organization.targets, blockOf(seq));
      let list = byPartition.get(organization.partition);
      if (!list) byPartition.set(organization.partition, (list = []));
      list.push({ seq, eventId });
    }
    const sentAt = now();
    for (const { seq } of items) ledger.sent(seq, sentAt);
    try {
      const metadata = await this.producer.send({
        topic: this.eventsTopic,
        acks: -1,
        messages: items.map((item) => item.message),
      });
      for (const [partition, records] of byPartition) {
        const base = metadata.find((m) => m.partition === partition)?.baseOffset;
        if (base === undefined) throw new Error(`no offset for partition ${partition}`);
        this.pending.add(partition, Number(base), records);
      }
      this.produced += items.length;
    } catch (error) {
      const at = now();
      for (const { seq } of items) ledger.failed(seq, at, (error as Error).message);
    }
  }

  /** Drain: until every record sent is accepted (or failed), bounded by `untilMs`. */
  private async settled(ledger: Ledger, untilMs: number): Promise<void> {
    const { session } = this;
    while (
      now() < Math.min(untilMs, session.ctx.deadlineMs) &&
      session.stack.exited().length === 0
    ) {
      const p = ledger.progress;
      if (p.accepted + p.refused + p.failed >= p.sent) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** A phase's figures: produced/s over its producing time, accepted/s over the ledger's. */
  private async finishPhase(
    label: string,
    ledger: Ledger,
    startMs: number,
    endMs: number,
  ): Promise<RunReport> {
    const window = { label, startMs, loadEndMs: endMs, offeredPerSecond: null };
    const run = await this.session.report(window, ledger);
    const events = ledger.allEvents();
    const latency = distribution(
      events.filter((e) => e.outcome === 'accepted').map((e) => e.answeredAt - e.scheduledAt),
    );
    this.phases.push({
      label,
      run,
      ledger,
      window,
      events: events.length,
      producedPerSecond: ratePerSecond(run.ledger.events.sent, startMs, endMs),
      latency,
    });
    this.runs.push(run);
    this.session.ctx.progress.note(
      `  ${label}: fan-out accepted ${fmtRate(run.acceptedPerSecond)} events/s, p50 ${fmtMs(latency?.p50)}, p99 ${fmtMs(latency?.p99)}`,
    );
    return run;
  }
}

/**
 * ingest-kafka: events written straight onto `<prefix>.events` by a kafkajs producer set up as
 * the documented direct producer (the envelope of docs/schemas/event-envelope.schema.json, keyed
 * by organization id, murmur2 partitioner, idempotent, acks=all, --batch records per send, one
 * send in flight), for --organizations organizations spread over the topic's partitions.
 *
 * "Accepted" is when the fan-out's committed offset on `<prefix>.events` passed the record,
 * read from Kafka every 25 ms: the fan-out commits a batch only after its events and messages
 * are in PostgreSQL and its deliveries acknowledged by Kafka. Two phases:
 * - burst: --events records as fast as the producer goes; the fan-out's accepted events/s
 *   (first send to the last commit) is its capacity, and latency there is mostly queueing;
 * - paced: an open loop at --rate (default half the burst's accepted rate) for --duration s;
 *   latency (commit seen − the record's planned time) at a load the fan-out keeps up with.
 */
export async function runIngestKafka(ctx: ScenarioContext): Promise<ScenarioResult> {
  const session = await BenchSession.open(ctx);
  const run = new IngestKafkaRun(session);
  const undo = ctx.cleanup.add('ingest-kafka clients', () => run.stopClients());
  try {
    const setup = await run.setUp();
    const burst = await run.burst();
    const rate = ctx.options.rate > 0 ? ctx.options.rate : burst.acceptedPerSecond / 2;
    if (rate > 0) await run.paced(rate);
    const checks = await run.reconcile(setup);
    return await run.report(setup, checks, rate);
  } finally {
    undo();
    await run.stopClients();
    await session.close();
  }
}

/** The id of the last event of organization `index` the fan-out accepted, latest phase first. */
function lastAcceptedOf(
  ledgers: readonly Ledger[],
  organizations: number,
  index: number,
): string | undefined {
  for (const ledger of [...ledgers].reverse()) {
    const events = ledger.allEvents();
    for (let i = events.length - 1; i >= 0; i--) {
      const event = events[i];
      if (event.outcome === 'accepted' && event.seq % organizations === index) return event.eventId;
    }
  }
  return undefined;
}

export const INGEST_KAFKA: Scenario = {
  name: 'ingest-kafka',
  summary:
    "envelopes produced straight onto <prefix>.events, timed to the fan-out's commit: a burst of\n--events, then --rate (half the burst's) for --duration s",
  flags: ['events', 'organizations', 'rate', 'duration', 'endpoints', 'records', 'batch'],
  // rate 0: the paced phase runs at half the rate the fan-out reached in the burst.
  defaults: {
    endpoints: 0,
    events: 100_000,
    organizations: 6,
    rate: 0,
    durationSeconds: 8,
    records: 100_000,
  },
  run: runIngestKafka,
};
