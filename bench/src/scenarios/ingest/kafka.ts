import { Message } from 'kafkajs';
import { createOrganization, Tenant } from '../../core/hookbase-api';
import { blockOf, blockRouter, Ledger, SEQ_BLOCK } from '../../core/ledger';
import { dueAt, dueBy, planEvents } from '../../core/pacing';
import { fmtCpu, fmtInt, fmtMs, fmtRate, fmtRatio, table } from '../../core/report';
import { ScenarioResult } from '../../core/result';
import { BenchSession, Scenario, ScenarioContext } from '../../core/session';
import { distribution, Distribution, ratePerSecond } from '../../core/stats';
import { now, sleep } from '../../core/util';
import { benchEnvelope, hookbaseLikeProducer } from '../../drivers/envelope';
import { PendingOffsets, SpreadPicker } from '../../drivers/fanout-offsets';
import { partitionFor } from '../../partitioner';
import { rawBaseline, rawHeadline } from './bounds';
import { addIngestEndpoints, MeasuredRun, settleRuns } from './steps';

interface Organization {
  tenant: Tenant;
  partition: number;
  /** Endpoint indexes its events are addressed to (none by default). */
  targets: ReadonlySet<number>;
}

interface Outgoing {
  seq: number;
  eventId: string;
  organization: Organization;
  message: Message;
}

interface Phase extends MeasuredRun {
  label: string;
  events: number;
  producedPerSecond: number;
  /** Fan-out commit seen − scheduled, for every accepted event. */
  latency: Distribution | null;
}

/** How often the fan-out's committed offsets are read: the resolution of "accepted at". */
const COMMIT_POLL_MS = 25;

/**
 * ingest-kafka: events written straight onto `<prefix>.events` by a kafkajs producer set up as
 * the documented direct producer (the envelope, keyed by organization id, murmur2, idempotent,
 * acks=all, --batch records per send, one send in flight), for --organizations organizations
 * spread over the topic's partitions. "Accepted" is when the fan-out's committed offset passed
 * the record (read every 25 ms): it commits only once the events and their messages are in
 * PostgreSQL. setup → burst (--events as fast as the producer goes: the fan-out's capacity) →
 * paced (an open loop at --rate, default half the burst's accepted rate, for --duration s: the
 * latency at a load it keeps up with) → reconcile (nothing set aside as invalid, each
 * organization's last event found through the API) → report.
 */
async function runIngestKafka(ctx: ScenarioContext): Promise<ScenarioResult> {
  const { options } = ctx;
  const session = await BenchSession.open(ctx);
  const topic = `${session.stack.topicPrefix}.events`;
  const { producer } = hookbaseLikeProducer(options.brokers, 'hookbase-bench-direct');
  let stopCommits: () => Promise<void> = async () => undefined;
  const stopClients = async () => {
    await stopCommits().catch(() => undefined);
    await producer.disconnect().catch(() => undefined);
  };
  const undo = ctx.cleanup.add('ingest-kafka clients', stopClients);
  try {
    // Setup: organizations spread over the partitions, the raw bound keyed as they are, the
    // commit watch, and one warm-up record per organization (not counted).
    const partitions = await session.kafka.partitionCount(topic);
    session.setPhase('setup', () => `organizations over ${partitions} partitions`);
    const picker = new SpreadPicker(partitions, options.organizations);
    const ledgers = [new Ledger('burst'), new Ledger('paced')];
    const router = blockRouter(ledgers);
    const organizations: Organization[] = [];
    for (let tries = 0; !picker.done && tries < options.organizations * 10 + 20; tries++) {
      const tenant = await createOrganization(session.stack, 'free');
      const partition = partitionFor(tenant.organizationId, partitions);
      if (!picker.offer(partition)) continue;
      const first = organizations.length * options.endpoints;
      const targets = await addIngestEndpoints(session, tenant, options.endpoints, router, first);
      organizations.push({ tenant, partition, targets });
    }
    const raw = await rawBaseline(
      session,
      organizations.map((o) => o.tenant.organizationId),
    );
    const pending = new PendingOffsets();
    stopCommits = session.kafka.pollCommits(
      `${session.stack.topicPrefix}.fanout`,
      topic,
      COMMIT_POLL_MS,
      (partition, committed, at) => {
        for (const record of pending.passed(partition, committed))
          ledgers[blockOf(record.seq)]?.accepted(record.seq, at, record.eventId);
      },
    );
    const invalidBefore = await session.kafka.highWatermarks(`${topic}.invalid`);
    await producer.connect();
    const warmUp = organizations.map((o) => ({
      ...benchEnvelope(o.tenant.organizationId, -1, 0),
      partition: o.partition,
    }));
    await producer.send({ topic, acks: -1, messages: warmUp });

    /** One envelope, built before it is due, on the partition its key hashes to. */
    const build = (seq: number): Outgoing => {
      const organization = organizations[seq % organizations.length];
      const { tenant, partition } = organization;
      const record = benchEnvelope(tenant.organizationId, seq, options.payloadBytes);
      const message = { key: record.key, value: record.value, partition };
      return { seq, eventId: record.eventId, organization, message };
    };
    let produced = 0;
    /** One produce request; its records filed under the offsets Kafka gave them. */
    const send = async (
      ledger: Ledger,
      items: Outgoing[],
      scheduledAt: (seq: number) => number,
    ) => {
      for (const { seq, organization } of items)
        ledger.schedule(seq, scheduledAt(seq), organization.targets);
      const sentAt = now();
      for (const { seq } of items) ledger.sent(seq, sentAt);
      try {
        const messages = items.map((item) => item.message);
        for (const { partition, baseOffset } of await producer.send({
          topic,
          acks: -1,
          messages,
        })) {
          const mine = items.filter((item) => item.organization.partition === partition);
          pending.add(
            partition,
            Number(baseOffset),
            mine.map(({ seq, eventId }) => ({ seq, eventId })),
          );
        }
        produced += items.length;
      } catch (error) {
        const at = now();
        for (const { seq } of items) ledger.failed(seq, at, (error as Error).message);
      }
    };
    const phases: Phase[] = [];
    /** Drain (every record sent accepted or failed, bounded), then the phase's figures. */
    const finish = async (label: string, ledger: Ledger, startMs: number) => {
      const producedMs = now();
      const untilMs = Math.min(producedMs + options.drainTimeoutSeconds * 1000, ctx.deadlineMs);
      const answered = (p = ledger.progress) => p.accepted + p.refused + p.failed >= p.sent;
      while (!answered() && now() < untilMs && session.stack.exited().length === 0) await sleep(20);
      const window = { label, startMs, loadEndMs: producedMs, offeredPerSecond: null };
      const run = await session.report(window, ledger);
      const latency = distribution(
        ledger
          .allEvents()
          .flatMap((e) => (e.outcome === 'accepted' ? [e.answeredAt - e.scheduledAt] : [])),
      );
      const producedPerSecond = ratePerSecond(run.ledger.events.sent, startMs, producedMs);
      const events = run.ledger.events.scheduled;
      phases.push({ label, run, ledger, window, events, producedPerSecond, latency });
      ctx.progress.note(
        `  ${label}: fan-out accepted ${fmtRate(run.acceptedPerSecond)} events/s, p50 ${fmtMs(latency?.p50)}, p99 ${fmtMs(latency?.p99)}`,
      );
      return run;
    };

    // Burst: --events envelopes (built beforehand, in slices so the watch keeps running).
    const [burstLedger, pacedLedger] = ledgers;
    session.setPhase('burst', () => `building ${fmtInt(options.events)} envelopes`);
    const items: Outgoing[] = [];
    while (items.length < options.events) {
      const end = Math.min(options.events, items.length + 5000);
      for (let seq = items.length; seq < end; seq++) items.push(build(seq));
      await new Promise((resolve) => setImmediate(resolve));
    }
    session.setPhase(
      'burst',
      () =>
        `produced ${fmtInt(produced)} · fan-out accepted ${fmtInt(burstLedger.progress.accepted)}`,
      () => burstLedger.progress.accepted / options.events,
    );
    const burstStart = now();
    for (let next = 0; next < items.length && now() < ctx.deadlineMs; next += options.batch) {
      const at = now();
      await send(burstLedger, items.slice(next, next + options.batch), () => at);
    }
    const burst = await finish('burst', burstLedger, burstStart);

    // Paced: every few milliseconds, what is due goes out as one send (at most --batch records).
    const rate = options.rate > 0 ? options.rate : burst.acceptedPerSecond / 2;
    if (rate > 0) {
      const plan = {
        startMs: now(),
        ratePerSecond: rate,
        count: planEvents(rate, options.durationSeconds),
      };
      session.setPhase(
        `paced at ${fmtRate(rate)}/s`,
        () => `fan-out accepted ${fmtInt(pacedLedger.progress.accepted)}/${fmtInt(plan.count)}`,
        () => pacedLedger.progress.accepted / plan.count,
      );
      for (let next = 0; next < plan.count && now() < ctx.deadlineMs;) {
        const due = Math.min(dueBy(plan, now()), next + options.batch);
        if (due <= next) {
          await sleep(2);
          continue;
        }
        const batch = Array.from({ length: due - next }, (_, i) => build(SEQ_BLOCK + next + i));
        await send(pacedLedger, batch, (seq) => dueAt(plan, seq - SEQ_BLOCK));
        next = due;
      }
      await finish(`paced ${fmtRate(rate)}/s`, pacedLedger, plan.startMs);
    }

    // Reconcile: deliveries settled (with endpoints), nothing set aside as invalid, and the last
    // accepted event of each organization found through the API.
    const invalidNow = await session.kafka.highWatermarks(`${topic}.invalid`).catch(() => null);
    await stopCommits();
    const problems = await settleRuns(session, phases);
    const invalid = invalidNow === null ? null : invalidNow - invalidBefore;
    if (invalid === null) problems.push(`could not read ${topic}.invalid`);
    else if (invalid > 0) problems.push(`${invalid} records were set aside as invalid`);
    let found = 0;
    for (const [index, { tenant }] of organizations.entries()) {
      const last = [...pacedLedger.allEvents(), ...burstLedger.allEvents()]
        .filter((e) => e.outcome === 'accepted' && e.seq % organizations.length === index)
        .sort((a, b) => b.seq - a.seq)[0];
      if (!last) continue;
      const path = `/api/organizations/${tenant.organizationId}/events/${last.eventId}`;
      const { status } = await tenant.client.get(path);
      if (status === 200) found++;
      else
        problems.push(`event ${last.eventId} committed by the fan-out but GET answered ${status}`);
    }

    // Report: the fan-out's accepted rate, the paced latency, the raw bound and the checks.
    const [best, paced] = phases;
    const { acceptedPerSecond } = best.run;
    const count = organizations.length;
    const keptUp = acceptedPerSecond >= 0.95 * best.producedPerSecond;
    return await session.result({
      title: `${fmtInt(options.events)} envelopes straight onto ${topic}, then paced at ${fmtRate(rate)}/s for ${options.durationSeconds} s, ${count} organizations`,
      summary:
        `fan-out accepted ${fmtRate(acceptedPerSecond)} events/s (produced ${fmtRate(best.producedPerSecond)}/s)` +
        ` · raw ${fmtRate(raw.perSecond)}/s · ratio ${fmtRatio(acceptedPerSecond, raw.perSecond)}` +
        (paced ? ` · paced p99 ${fmtMs(paced.latency?.p99)}` : ''),
      headline: [
        [
          'fan-out accepted',
          `${fmtRate(acceptedPerSecond)} events/s (burst of ${fmtInt(best.events)}; produced at ${fmtRate(best.producedPerSecond)} records/s; ${keptUp ? 'the fan-out kept up, so this is the producer’s rate, a lower bound of the fan-out’s' : 'the fan-out fell behind, so this is its capacity'}, peak fan-out lag ${fmtInt(best.run.lag.peak?.fanout)})`,
        ],
        ...rawHeadline(raw, acceptedPerSecond),
        ['organizations', `${count}, on ${picker.covered} of ${partitions} partitions of ${topic}`],
        [
          'checks',
          `${invalid ?? '?'} records set aside as invalid; the last accepted event of ${found}/${count} organizations found through the API`,
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
          ['÷ raw', (p) => fmtRatio(p.run.acceptedPerSecond, raw.perSecond)],
          ['p50', (p) => fmtMs(p.latency?.p50)],
          ['p95', (p) => fmtMs(p.latency?.p95)],
          ['p99', (p) => fmtMs(p.latency?.p99)],
          ['max', (p) => fmtMs(p.latency?.max)],
          ['peak fan-out lag', (p) => fmtInt(p.run.lag.peak?.fanout)],
          ['Hookbase CPU', (p) => fmtCpu(p.run)],
        ]),
      ],
      runs: phases.map((p) => p.run),
      problems,
      notes: [
        `accepted = the fan-out group's committed offset on ${topic} passed the record (read every ${COMMIT_POLL_MS} ms)`,
        'burst latency is mostly waiting behind the burst; the paced phase (half the burst’s rate unless --rate) is the latency figure',
      ],
      extra: { raw, organizations: count, partitionsCovered: picker.covered },
    });
  } finally {
    undo();
    await stopClients();
    await session.close();
  }
}

export const INGEST_KAFKA: Scenario = {
  name: 'ingest-kafka',
  summary:
    "envelopes produced straight onto <prefix>.events, timed to the fan-out's commit: a burst of\n--events, then --rate (half the burst's) for --duration s",
  flags: ['events', 'organizations', 'rate', 'duration', 'endpoints', 'records', 'batch'],
  // rate 0: the paced phase runs at half the rate the fan-out reached in the burst.
  defaults: { endpoints: 0, events: 100_000, rate: 0, durationSeconds: 8 },
  run: runIngestKafka,
};
