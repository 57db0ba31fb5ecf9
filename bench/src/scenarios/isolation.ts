import { EndpointBehaviour, HEALTHY } from '../core/behaviour';
import { createEndpoints, createOrganization, Tenant } from '../core/hookbase-api';
import { blockRouter, Ledger, SEQ_BLOCK } from '../core/ledger';
import { UsageError } from '../core/options';
import { planEvents } from '../core/pacing';
import { fmtInt, fmtMb, fmtMs, rows } from '../core/report';
import { RunReport, ScenarioResult } from '../core/result';
import { BenchSession, Scenario, ScenarioContext } from '../core/session';
import { distribution, median } from '../core/stats';
import { now, sleep } from '../core/util';
import { IngestClient, publishGroupInto, publishSeq } from '../drivers/ingest-clients';
import { benchPayload, EVENT_TYPE, runOpenLoop } from '../drivers/publisher';
import { partitionFor } from '../partitioner';

/** Receiver paths: the FIFO/plain neighbour is 0, a hanging organization's from 100,000. */
const NEIGHBOUR = 0;
const TENANT_NEIGHBOUR_BASE = 100_000;
/** --tenants: the healthy organization's p99 may be this much above its run alone. */
const TENANT_P99_TOLERANCE = 0.1;
/** Sequence blocks (SEQ_BLOCK): the neighbour's in 2, its backlog's in 3, the warm-up's in 4, run k's in 5 + k. */
const NEIGHBOUR_SEQ = 2;
const BACKLOG_SEQ = 3;
const WARM_UP = 4;
const FIRST_RUN = 5;
const WARM_UP_SECONDS = 2;
/** FIFO: messages queued behind the failing head before the last run unless told otherwise. */
const FIFO_BACKLOG = 50_000;
const BACKLOG_BATCH = 500;
const BACKLOG_CONNECTIONS = 4;
const ALWAYS_503 = (latencyMs: number): EndpointBehaviour =>
  ({ latencyMs, failRate: 1, failWith: 503, failAttempts: 'all' }) as const;

/** The neighbour's FIFO lane as the API shows it (null when it cannot be read). */
async function fifoState(tenant: Tenant, endpointId: string) {
  const { status, body } = await tenant.client.get(
    `/api/organizations/${tenant.organizationId}/webhook-endpoints/${endpointId}/fifo-state`,
  );
  type State = { queueDepth: number; blockedReason: string | null; head: { attempts: number } };
  return status === 200 ? (body.data as State) : null;
}

/** Endpoints placed for the scenario: their ids and receiver paths, in the same order. */
interface Placed {
  tenant: Tenant;
  ids: string[];
  indices: number[];
}

/**
 * The neighbour. By default one always-503 endpoint (FIFO unless --non-fifo) of the healthy
 * endpoints' organization. With --tenants, another organization's --neighbours plain endpoints
 * that never answer, on a receiver origin of their own (Hookbase bounds its connections per
 * origin; sharing it would measure that bound instead of the dispatch pool), one attempt each.
 */
async function placeNeighbours(session: BenchSession, tenant: Tenant, ledger: Ledger) {
  const { options } = session.ctx;
  const behaviour = ALWAYS_503(options.neighbourLatencyMs);
  if (!options.tenants) {
    const fifo = { fifoEnabled: options.fifo || undefined };
    const ids = await session.addEndpoints(tenant, [NEIGHBOUR], ledger, behaviour, fifo);
    return { tenant, ids, indices: [NEIGHBOUR] };
  }
  const other = await createOrganization(session.stack, 'free');
  const indices = Array.from({ length: options.neighbours }, (_, i) => TENANT_NEIGHBOUR_BASE + i);
  const retry = { delaysMs: [0], maxAgeMs: 600_000 };
  const origin = await session.receiver.start();
  const ids = await session.addEndpoints(other, indices, ledger, behaviour, { retry }, origin);
  return { tenant: other, ids, indices };
}

/**
 * The healthy endpoints, receiver paths from 1. Beside one failing endpoint they must share its
 * partition of the deliveries topic (kafkajs's partitioner, as Hookbase's producer): endpoints
 * are created 16 at a time until enough hash there. Beside a hanging organization (`partition`
 * null) what they share is the dispatch pool, so they go where they hash.
 */
async function placeHealthy(
  session: BenchSession,
  tenant: Tenant,
  partition: number | null,
  partitions: number,
): Promise<Placed> {
  const { options } = session.ctx;
  const placed: Placed = { tenant, ids: [], indices: [] };
  let created = 0;
  session.setPhase('setup', () => `healthy endpoints: ${placed.ids.length} placed of ${created}`);
  while (placed.ids.length < options.healthy) {
    if (created >= options.healthy * partitions * 6)
      throw new Error(
        `only ${placed.ids.length} of ${created} endpoints on partition ${partition}`,
      );
    const indices = Array.from(
      { length: partition === null ? options.healthy : 16 },
      (_, i) => 1 + created + i,
    );
    const fifoEnabled = options.fifo || undefined;
    const requests = indices.map((i) => ({ url: `${session.receiverUrl}/e/${i}`, fifoEnabled }));
    const ids = await createEndpoints(tenant, requests, 16);
    created += ids.length;
    ids.forEach((id, i) => {
      if (placed.ids.length >= options.healthy) return;
      if (partition !== null && partitionFor(id, partitions) !== partition) return;
      placed.ids.push(id);
      placed.indices.push(indices[i]);
    });
  }
  return placed;
}

/**
 * Queues `count` messages behind the failing FIFO head (batch REST, a few requests in flight),
 * then waits until the lane's queue holds them all (parked in PostgreSQL).
 */
async function pourBacklog(
  session: BenchSession,
  neighbour: Placed,
  ledger: Ledger,
  count: number,
) {
  const { options, deadlineMs } = session.ctx;
  const untilMs = Math.min(deadlineMs - 30_000, now() + 90_000);
  const { ingestUrl } = session.stack;
  const client = new IngestClient(ingestUrl, neighbour.tenant.apiKey, BACKLOG_CONNECTIONS, true);
  const before = ledger.progress.accepted;
  const accepted = () => ledger.progress.accepted - before;
  let [queued, sent, seq] = [0, 0, BACKLOG_SEQ * SEQ_BLOCK];
  session.setPhase(
    'backlog',
    () => `${fmtInt(accepted())}/${fmtInt(count)} accepted, ${fmtInt(queued)} queued`,
  );
  const startMs = now();
  const worker = async () => {
    while (sent < count && now() < untilMs) {
      const group = Array.from({ length: Math.min(BACKLOG_BATCH, count - sent) }, () => seq++);
      sent += group.length;
      const at = now();
      for (const s of group) ledger.schedule(s, at, new Set([NEIGHBOUR]));
      const payload = (s: number) => benchPayload(s, options.payloadBytes);
      const events = group.map((s) => ({
        eventType: EVENT_TYPE,
        payload: payload(s),
        endpointIds: neighbour.ids,
      }));
      await publishGroupInto(ledger, client, group, events);
    }
  };
  await Promise.all(Array.from({ length: BACKLOG_CONNECTIONS }, worker)).finally(() =>
    client.close(),
  );
  const publishedMs = now();
  while (now() < untilMs) {
    queued = (await fifoState(neighbour.tenant, neighbour.ids[0]))?.queueDepth ?? 0;
    if (queued >= accepted()) break;
    await sleep(250);
  }
  const publishSeconds = (publishedMs - startMs) / 1000;
  return {
    publishSeconds,
    parkSeconds: (now() - publishedMs) / 1000,
    queued,
    accepted: accepted(),
  };
}

/**
 * isolation: healthy endpoints beside a neighbour that never succeeds, with and without the
 * neighbour's load, in alternating rounds (so drift over the scenario falls on both kinds).
 * - default: FIFO lanes sharing their partition of `<prefix>.deliveries` with an always-503 FIFO
 *   neighbour; before a last run, 50,000 messages are queued behind the neighbour's head
 *   (--neighbour-backlog), which shows the memory a long blocked lane costs;
 * - --non-fifo: the same with plain endpoints (the circuit breaker's case);
 * - --tenants: another organization's endpoints that never answer share the dispatcher's pool of
 *   attempts in flight; the healthy organization's p99 beside them should stay within 10 %.
 * setup → warm-up → per run: load → drain → reconcile → report (with ÷ without ratios, memory).
 */
async function runIsolation(ctx: ScenarioContext): Promise<ScenarioResult> {
  const { options } = ctx;
  const session = await BenchSession.open(ctx);
  const clients: IngestClient[] = [];
  try {
    // Setup: the organizations, the neighbour, the healthy endpoints, the runs' ledgers.
    const tenant = await createOrganization(session.stack, options.fifo ? 'pro' : 'free');
    const neighbourLedger = new Ledger('neighbour');
    const neighbour = await placeNeighbours(session, tenant, neighbourLedger);
    const partitions = await session.kafka.partitionCount(
      `${session.stack.topicPrefix}.deliveries`,
    );
    const partition = options.tenants ? null : partitionFor(neighbour.ids[0], partitions);
    const healthy = await placeHealthy(session, tenant, partition, partitions);
    const backlogWanted = options.neighbourBacklog ?? (options.fifo ? FIFO_BACKLOG : 0);
    const plan = Array.from({ length: options.rounds }, (_, k) => [
      { label: `without #${k + 1}`, beside: false },
      { label: `with #${k + 1}`, beside: true },
    ]).flat();
    if (backlogWanted > 0)
      plan.push({ label: `with ${fmtInt(backlogWanted)} queued`, beside: true });
    const ledgers = plan.map((run) => new Ledger(run.label));
    const warmUpLedger = new Ledger('warm-up');
    const router = blockRouter([warmUpLedger, ...ledgers], WARM_UP);
    healthy.ids.forEach((id, i) => session.addEndpoint(id, healthy.indices[i], router, HEALTHY));
    const kind = options.tenants ? 'plain' : options.fifo ? 'FIFO' : 'non-FIFO';
    const beside = options.tenants
      ? `another organization's ${neighbour.ids.length} endpoints that never answer`
      : `an always-503 ${kind} neighbour on partition ${partition} of ${partitions}`;
    ctx.progress.note(`isolation: ${healthy.ids.length} healthy endpoints beside ${beside}`);
    const { ingestUrl } = session.stack;
    const client = new IngestClient(ingestUrl, tenant.apiKey, options.maxInFlight);
    const neighbourClient = options.tenants
      ? new IngestClient(ingestUrl, neighbour.tenant.apiKey, options.maxInFlight)
      : client;
    clients.push(client, neighbourClient);
    let neighbourSeq = NEIGHBOUR_SEQ * SEQ_BLOCK;
    const problems: string[] = [];

    /** An open loop at `rate` to each of `to`'s endpoints for `seconds`. */
    const load = (
      to: Placed,
      ledger: Ledger,
      rate: number,
      next: () => number,
      seconds: number,
    ) => {
      const targets = new Set(to.indices);
      const via = to === healthy ? client : neighbourClient;
      const { payloadBytes } = options;
      return runOpenLoop({
        ratePerSecond: rate,
        count: planEvents(rate, seconds),
        maxInFlight: options.maxInFlight,
        deadlineMs: Math.min(ctx.deadlineMs, now() + seconds * 1000 + 20_000),
        send: (_, at) =>
          publishSeq(ledger, via, next(), at, { targets, payloadBytes, endpointIds: to.ids }),
      });
    };
    const healthyLoad = (ledger: Ledger, firstSeq: number, seconds: number) => {
      let seq = firstSeq;
      return load(healthy, ledger, options.rate, () => seq++, seconds);
    };
    const neighbourLoad = async (seconds: number) => {
      const rate = options.neighbourRate;
      if (rate > 0) await load(neighbour, neighbourLedger, rate, () => neighbourSeq++, seconds);
    };
    /** --tenants: every message of the hanging organization ends (timeout, DLQ) before going on. */
    const untilNeighbourQuiet = async (label: string) => {
      session.watch(`${label}: the hanging organization going quiet`, [neighbourLedger], null);
      const seconds = options.drainTimeoutSeconds;
      if (!(await session.drain([neighbourLedger], now() + seconds * 1000)))
        problems.push(
          `${label}: the hanging organization's messages did not all end in ${seconds} s`,
        );
    };

    // Warm-up at the same load, not measured: otherwise run 1 alone pays for connections and the
    // JIT. With --tenants the hanging organization joins it, so the first run with it does not pay
    // alone for what a neighbour's first timeouts cost once.
    session.watch('warm-up', [warmUpLedger], null);
    await Promise.all([
      healthyLoad(warmUpLedger, WARM_UP * SEQ_BLOCK, WARM_UP_SECONDS),
      options.tenants ? neighbourLoad(WARM_UP_SECONDS) : undefined,
    ]);
    await session.drain([warmUpLedger], now() + options.drainTimeoutSeconds * 1000);
    if (options.tenants) await untilNeighbourQuiet('warm-up');

    // The runs: load → drain (only the healthy endpoints' messages must settle) → reconcile.
    const measured: RunReport[] = [];
    let backlog: Awaited<ReturnType<typeof pourBacklog>> | undefined;
    for (const [k, { label, beside }] of plan.entries()) {
      if (k === 2 * options.rounds) {
        backlog = await pourBacklog(session, neighbour, neighbourLedger, backlogWanted);
        if (backlog.queued < backlog.accepted)
          problems.push(
            `backlog: only ${backlog.queued} of ${backlog.accepted} accepted messages were queued behind the failing head in time`,
          );
      }
      const seconds = options.durationSeconds;
      const done = await session.deliveryRun({
        label,
        ledger: ledgers[k],
        planned: planEvents(options.rate, seconds),
        offeredPerSecond: options.rate * healthy.ids.length,
        drainSeconds: options.drainTimeoutSeconds,
        load: async () => {
          const [loaded] = await Promise.all([
            healthyLoad(ledgers[k], (FIRST_RUN + k) * SEQ_BLOCK, seconds),
            beside ? neighbourLoad(seconds) : undefined,
          ]);
          return loaded;
        },
        afterDrain: async () => {
          if (beside && options.tenants) await untilNeighbourQuiet(label);
        },
      });
      problems.push(...done.problems);
      measured.push(done.run);
    }

    // Reconcile: the healthy endpoints' ratios with ÷ without the neighbour, by round and pooled.
    const ratio = (a: number | undefined, b: number | undefined) => (a && b ? b / a : null);
    const pairs = Array.from({ length: options.rounds }, (_, k) => [
      measured[2 * k],
      measured[2 * k + 1],
    ]);
    const perRound = pairs.map(([alone, with_]) => ({
      throughput: ratio(alone.throughputPerSecond, with_.throughputPerSecond),
      p50: ratio(alone.latency?.p50, with_.latency?.p50),
      p99: ratio(alone.latency?.p99, with_.latency?.p99),
    }));
    const medianOf = (key: 'throughput' | 'p50' | 'p99') => median(perRound.map((r) => r[key]));
    const throughputRatio = medianOf('throughput') ?? 0;
    const [p50Ratio, p99Ratio] = [medianOf('p50'), medianOf('p99')];
    // One run's p99 is its 16 slowest deliveries; the p99 of all the runs of each kind together
    // is the steadier figure, and --tenants' verdict.
    const pooledP99 = (kind: boolean) =>
      distribution(
        ledgers
          .filter((_, k) => k < 2 * options.rounds && plan[k].beside === kind)
          .flatMap((l) => l.deliveries().map((d) => d.deliveredAt - d.scheduledAt)),
      )?.p99;
    const pooled = { without: pooledP99(false), with: pooledP99(true) };
    const pooledRatio = ratio(pooled.without, pooled.with);

    // Report.
    const procName = (
      measured[0].services.find((x) => x.name === 'dispatcher') ?? measured[0].services[0]
    )?.name;
    const proc = (run: RunReport | undefined) => run?.services.find((x) => x.name === procName);
    const peakIn = (runs: RunReport[]) =>
      fmtMb(Math.max(...runs.map((r) => proc(r)?.windowPeakRssMb ?? 0)));
    const memory =
      `${procName}: peak ${peakIn(pairs.map((p) => p[0]))} in the runs without the neighbour, ${peakIn(pairs.map((p) => p[1]))} with it` +
      (backlog
        ? `, ${peakIn(measured.slice(-1))} with ${fmtInt(backlog.accepted)} queued behind its head`
        : '') +
      `; VmHWM ${fmtMb(proc(measured.at(-1))?.peakRssMb)}`;
    const lane = options.fifo ? await fifoState(tenant, neighbour.ids[0]) : null;
    const n = neighbourLedger.reconcile().messages;
    const list = (values: (number | null)[]) => values.map((v) => v?.toFixed(2) ?? '–').join(', ');
    const fixed = (v: number | null) => v?.toFixed(2) ?? '–';
    const rate = options.rate * healthy.ids.length;
    const stackEnv = Object.entries(options.stackEnv).map(([key, value]) => `${key}=${value}`);
    return await session.result({
      summary: `healthy throughput ratio ${throughputRatio.toFixed(2)} with/without ${beside}, p99 ratio ${fixed(p99Ratio)}`,
      title: `${healthy.ids.length} healthy endpoints beside ${beside}, ${rate} msg/s for ${options.durationSeconds} s`,
      headline: rows(
        [
          'run',
          `${kind} endpoints${options.tenants ? ' of two organizations' : ''}, ${session.stack.topology}`,
        ],
        options.tenants && [
          `healthy p99 within ${TENANT_P99_TOLERANCE * 100} % of its run alone`,
          pooledRatio === null
            ? 'unknown (no latency measured)'
            : `${pooledRatio <= 1 + TENANT_P99_TOLERANCE ? 'yes' : 'NO'} (p99 of all ${options.rounds} runs of each kind: ${fmtMs(pooled.with)} beside ÷ ${fmtMs(pooled.without)} alone = ${pooledRatio.toFixed(2)})`,
        ],
        [
          'healthy throughput ratio',
          `${throughputRatio.toFixed(2)} (median of ${options.rounds} rounds with ÷ without: ${list(perRound.map((r) => r.throughput))})`,
        ],
        [
          'healthy latency ratio',
          `p50 ${fixed(p50Ratio)} · p99 ${fixed(p99Ratio)} (medians; p99 by round: ${list(perRound.map((r) => r.p99))})`,
        ],
        ['dispatcher memory', memory],
        !!backlog && [
          'blocked lane',
          `${fmtInt(backlog.accepted)} messages queued behind the failing head before the last run (published in ${backlog.publishSeconds.toFixed(1)} s, all queued ${backlog.parkSeconds.toFixed(1)} s later)` +
            (lane
              ? `; at the end: queueDepth ${fmtInt(lane.queueDepth)}, blocked (${lane.blockedReason ?? '–'}), head attempts ${lane.head?.attempts ?? '–'}`
              : ''),
        ],
        [
          'neighbour backlog',
          `${fmtInt(n.published)} messages published to it, ${fmtInt(n.attempts)} attempts (${options.tenants ? 'none answered' : 'all 503'}), ${fmtInt(n.deadLettered)} dead-lettered ${JSON.stringify(session.reasonsFor(neighbour.indices))}, ${fmtInt(n.published - n.deadLettered)} still waiting for a retry`,
        ],
      ),
      runs: measured,
      problems,
      notes: [
        options.tenants
          ? `the hanging organization's endpoints hold every request past the delivery timeout (stack: ${stackEnv.join(' ')}); each message gets one attempt`
          : `every endpoint is ${kind}; the healthy ones share the failing one's partition`,
        'ratio 1.00 means the neighbour costs the healthy endpoints nothing; lower is worse',
      ],
      extra: {
        partition,
        throughputRatio,
        latencyRatio: { p50: p50Ratio, p99: p99Ratio },
        pooledP99: { ...pooled, ratio: pooledRatio },
        perRound,
        neighbour: n,
        backlog: backlog ?? null,
        laneAtEnd: lane,
      },
    });
  } finally {
    for (const client of new Set(clients)) await client.close();
    await session.close();
  }
}

/**
 * --tenants: 30 endpoints of another organization that never answer receive 2 events/s each,
 * 60 attempts/s: more than the dispatch pool (256) can end at a 5 s timeout (51/s), so they keep
 * it full. The healthy organization's 8 endpoints get 25 events/s each, well within what the
 * machine carries. Five rounds: a run's p99 is about its 16th slowest delivery, so the median of
 * five rounds is steadier than that of three. Its stack: a hanging attempt ends after 5 s, and
 * the circuit breakers stay closed so the hanging endpoints keep taking slots in every round.
 */
const TENANTS = {
  defaults: { rounds: 5, neighbours: 30, rate: 25, neighbourRate: 2, neighbourLatencyMs: 60_000 },
  stackEnv: { HOOKBASE_DELIVERY_TIMEOUT_MS: '5000', HOOKBASE_CIRCUIT_FAILURE_THRESHOLD: '1000' },
};

export const ISOLATION: Scenario = {
  name: 'isolation',
  summary:
    "healthy FIFO lanes beside an always-503 FIFO neighbour on their partition, with/without\n(--non-fifo: plain endpoints; --tenants: another organization's endpoints that never answer)",
  flags: [
    'healthy',
    'rate',
    'duration',
    'max-in-flight',
    'neighbour-rate',
    'neighbour-latency',
    'neighbour-backlog',
    'rounds',
    'non-fifo',
    'tenants',
    'neighbours',
  ],
  defaults: { healthy: 8, rate: 150, durationSeconds: 8, neighbourRate: 50, neighbours: 30 },
  refine(given) {
    if (given.neighbours !== undefined && !given.tenants)
      throw new UsageError('--neighbours goes with isolation --tenants');
    if (given.tenants && given.nonFifo)
      throw new UsageError('--tenants runs plain endpoints already (no --non-fifo)');
    if (given.tenants) return TENANTS;
    // FIFO lanes unless --non-fifo, loaded below what a lane carries on this machine (one message
    // in flight each), so the comparison is of lanes that keep up.
    return { defaults: given.nonFifo ? {} : { fifo: true, rate: 50 } };
  },
  run: runIsolation,
};
