import { EndpointBehaviour, HEALTHY } from '../behaviour';
import { now } from '../clock';
import { createFifoEndpoint } from '../fifo-support';
import { createEndpoint, createOrganization, Tenant } from '../hookbase-api';
import { Ledger, LedgerSink } from '../ledger';
import { planEvents } from '../pacing';
import { partitionFor } from '../partitioner';
import { benchPayload, EVENT_TYPE, IngestClient, publishInto, runOpenLoop } from '../publisher';
import { fmtInt, fmtMb, fmtMs, fmtRate } from '../report';
import { RunReport, ScenarioResult } from '../result';
import { BenchSession, ScenarioContext } from '../session';

const NEIGHBOUR = 0;
/** Sequence numbers: run 1 from 0, run 2 from RUN_SEQ, the neighbour's events from 2 × RUN_SEQ. */
const RUN_SEQ = 10_000_000;
const WARM_UP = 3;
const WARM_UP_SECONDS = 2;
const ALWAYS_503 = (latencyMs: number): EndpointBehaviour => ({
  latencyMs,
  failRate: 1,
  failWith: 503,
  failAttempts: 'all',
});

/**
 * Creates endpoints until `wanted` of them hash to `partition` of the deliveries topic (the same
 * partitioner Hookbase's producer uses), so they share it with the failing neighbour.
 */
async function endpointsOnPartition(
  tenant: Tenant,
  receiverUrl: string,
  partition: number,
  partitions: number,
  wanted: number,
  onProgress: (found: number, created: number) => void,
): Promise<string[]> {
  const found: string[] = [];
  const limit = wanted * partitions * 6; // far beyond bad luck; bounded all the same
  let created = 0;
  while (found.length < wanted) {
    if (created >= limit) {
      throw new Error(
        `only ${found.length} of ${created} endpoints landed on partition ${partition}`,
      );
    }
    const batch = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        createEndpoint(tenant, { url: `${receiverUrl}/e/${1 + created + i}` }).then((id) => ({
          id,
          index: 1 + created + i,
        })),
      ),
    );
    created += batch.length;
    for (const endpoint of batch) {
      if (found.length < wanted && partitionFor(endpoint.id, partitions) === partition) {
        // The URL path carries the creation index; remember it with the id.
        found.push(`${endpoint.index}:${endpoint.id}`);
      }
    }
    onProgress(found.length, created);
  }
  return found;
}

/**
 * isolation: a failing endpoint (always 503) shares its partition of `<prefix>.deliveries` with
 * healthy endpoints. Run 1 measures the healthy endpoints alone; run 2 the same load with the
 * failing neighbour receiving its own load. Reported: the healthy throughput and latency ratios
 * (with / without) and the dispatcher's memory while the neighbour's backlog grows. With
 * --fifo the failing endpoint is a FIFO endpoint (refused by this build: exit 2).
 */
export async function runIsolation(ctx: ScenarioContext): Promise<ScenarioResult> {
  const { options, progress } = ctx;
  const session = await BenchSession.open(ctx);
  try {
    const tenant = await createOrganization(session.stack, options.fifo ? 'pro' : 'free');
    const neighbourLedger = new Ledger('neighbour');
    const neighbourRequest = { url: `${session.receiverUrl}/e/${NEIGHBOUR}` };
    const neighbourId = options.fifo
      ? await createFifoEndpoint(
          'isolation --fifo',
          tenant,
          neighbourRequest,
          'without --fifo the scenario runs today, with a non-FIFO failing endpoint',
        )
      : await createEndpoint(tenant, neighbourRequest);
    session.addEndpoint(
      neighbourId,
      NEIGHBOUR,
      neighbourLedger,
      ALWAYS_503(options.neighbourLatencyMs),
    );

    const partitions = await session.kafka.partitionCount(
      `${session.stack.topicPrefix}.deliveries`,
    );
    const partition = partitionFor(neighbourId, partitions);
    let status = '';
    session.setPhase(
      'setup',
      () => `placing ${options.healthy} healthy endpoints on partition ${partition}: ${status}`,
    );
    const healthy = (
      await endpointsOnPartition(
        tenant,
        session.receiverUrl,
        partition,
        partitions,
        options.healthy,
        (found, created) => {
          status = `${found} found in ${created} created`;
        },
      )
    ).map((entry) => {
      const [index, id] = entry.split(':');
      return { index: Number(index), id };
    });
    const runs = [new Ledger('without neighbour'), new Ledger('with failing neighbour')];
    const warmUp = new Ledger('warm-up');
    const ledgerOf = (seq: number) =>
      Math.floor(seq / RUN_SEQ) === WARM_UP ? warmUp : runs[Math.floor(seq / RUN_SEQ)];
    const router: LedgerSink = {
      attempt: (seq, endpoint, at, ok) => ledgerOf(seq)?.attempt(seq, endpoint, at, ok),
      deadLettered: (eventId, endpoint) =>
        ([...runs, warmUp].find((ledger) => ledger.knowsEvent(eventId)) ?? runs[0]).deadLettered(
          eventId,
          endpoint,
        ),
    };
    for (const endpoint of healthy)
      session.addEndpoint(endpoint.id, endpoint.index, router, HEALTHY);
    const healthyTargets = new Set(healthy.map((e) => e.index));
    const healthyIds = healthy.map((e) => e.id);
    progress.note(
      `isolation: neighbour ${neighbourId}${options.fifo ? ' (FIFO)' : ''} and ${healthy.length} healthy endpoints on partition ${partition} of ${partitions}`,
    );

    const client = new IngestClient(session.stack.ingestUrl, tenant.apiKey, options.maxInFlight);
    // Warm-up at the same load, not measured: otherwise run 1 alone pays for connection set-up
    // and the JIT, and the comparison favours run 2.
    session.watch('warm-up', [warmUp], null);
    await runOpenLoop({
      ratePerSecond: options.rate,
      count: planEvents(options.rate, WARM_UP_SECONDS),
      maxInFlight: options.maxInFlight,
      deadlineMs: ctx.deadlineMs,
      send: async (i, scheduledAt) => {
        const seq = WARM_UP * RUN_SEQ + i;
        warmUp.schedule(seq, scheduledAt, healthyTargets);
        await publishInto(warmUp, client, seq, {
          eventType: EVENT_TYPE,
          payload: benchPayload(seq, options.payloadBytes),
          endpointIds: healthyIds,
        });
      },
    });
    await session.drain([warmUp], now() + options.drainTimeoutSeconds * 1000);
    const planned = planEvents(options.rate, options.durationSeconds);
    const reports: {
      run: RunReport;
      offsetSeconds: number;
      window: { fromMs: number; toMs: number };
    }[] = [];
    const problems: string[] = [];
    let neighbourSeq = 2 * RUN_SEQ;
    for (const [runIndex, ledger] of runs.entries()) {
      const withNeighbour = runIndex === 1;
      session.watch(ledger.name, [ledger], planned);
      const startMs = now();
      const deadlineMs = Math.min(
        ctx.deadlineMs,
        startMs + options.durationSeconds * 1000 + 20_000,
      );
      const healthyLoad = runOpenLoop({
        ratePerSecond: options.rate,
        count: planned,
        maxInFlight: options.maxInFlight,
        deadlineMs,
        send: async (i, scheduledAt) => {
          const seq = runIndex * RUN_SEQ + i;
          ledger.schedule(seq, scheduledAt, healthyTargets);
          await publishInto(ledger, client, seq, {
            eventType: EVENT_TYPE,
            payload: benchPayload(seq, options.payloadBytes),
            endpointIds: healthyIds,
          });
        },
      });
      const neighbourLoad =
        withNeighbour && options.neighbourRate > 0
          ? runOpenLoop({
              ratePerSecond: options.neighbourRate,
              count: planEvents(options.neighbourRate, options.durationSeconds),
              maxInFlight: options.maxInFlight,
              deadlineMs,
              send: async (_, scheduledAt) => {
                const seq = neighbourSeq++;
                neighbourLedger.schedule(seq, scheduledAt, new Set([NEIGHBOUR]));
                await publishInto(neighbourLedger, client, seq, {
                  eventType: EVENT_TYPE,
                  payload: benchPayload(seq, options.payloadBytes),
                  endpointIds: [neighbourId],
                });
              },
            })
          : Promise.resolve(undefined);
      const [load] = await Promise.all([healthyLoad, neighbourLoad]);
      const loadEndMs = now();
      session.watch(`${ledger.name}: draining`, [ledger], null);
      // Only the healthy endpoints' messages must settle: the neighbour's keep retrying.
      const settled = await session.drain([ledger], loadEndMs + options.drainTimeoutSeconds * 1000);
      if (!settled)
        problems.push(
          `${ledger.name}: deliveries did not settle within ${options.drainTimeoutSeconds} s`,
        );
      if (load.stoppedByDeadline) problems.push(`${ledger.name}: load stopped at its deadline`);
      const run = await session.report(
        { label: ledger.name, startMs, loadEndMs, offeredPerSecond: options.rate * healthy.length },
        ledger,
      );
      problems.push(...run.ledger.problems.map((p) => `${ledger.name}: ${p}`));
      reports.push({
        run,
        offsetSeconds: session.offset(startMs),
        window: { fromMs: startMs, toMs: now() },
      });
    }
    await client.close();

    const [without, withNeighbour] = reports.map((r) => r.run);
    const throughputRatio =
      without.throughputPerSecond > 0
        ? withNeighbour.throughputPerSecond / without.throughputPerSecond
        : 0;
    const ratio = (a: number | undefined, b: number | undefined) => (a && b ? b / a : null);
    const p50Ratio = ratio(without.latency?.p50, withNeighbour.latency?.p50);
    const p99Ratio = ratio(without.latency?.p99, withNeighbour.latency?.p99);
    const dispatcher =
      withNeighbour.services.find((s) => s.name === 'dispatcher') ?? withNeighbour.services[0];
    const neighbour = neighbourLedger.reconcile();
    const kind = options.fifo ? 'FIFO' : 'non-FIFO';
    return await session.result({
      summary: `healthy throughput ratio ${throughputRatio.toFixed(2)} with/without a failing ${kind} neighbour, p99 ratio ${p99Ratio?.toFixed(2) ?? '–'}`,
      title: `${healthy.length} healthy endpoints beside an always-503 ${kind} neighbour on partition ${partition}, ${options.rate * healthy.length} msg/s for ${options.durationSeconds} s`,
      headline: [
        [
          'run',
          `${kind} failing endpoint (${options.fifo ? '--fifo' : 'without --fifo'}), ${session.stack.topology}`,
        ],
        [
          'healthy throughput ratio',
          `${throughputRatio.toFixed(2)} (with ${fmtRate(withNeighbour.throughputPerSecond)}/s ÷ without ${fmtRate(without.throughputPerSecond)}/s)`,
        ],
        [
          'healthy latency ratio',
          `p50 ${p50Ratio?.toFixed(2) ?? '–'} · p99 ${p99Ratio?.toFixed(2) ?? '–'} (with: p50 ${fmtMs(withNeighbour.latency?.p50)}, p99 ${fmtMs(withNeighbour.latency?.p99)}; without: p50 ${fmtMs(without.latency?.p50)}, p99 ${fmtMs(without.latency?.p99)})`,
        ],
        [
          'dispatcher memory',
          `${dispatcher ? `${dispatcher.name}: peak ${fmtMb(dispatcher.windowPeakRssMb)} during run 2 (run 1: ${fmtMb(without.services.find((s) => s.name === dispatcher.name)?.windowPeakRssMb)}), VmHWM ${fmtMb(dispatcher.peakRssMb)}` : 'no process to read (attached without --pid)'}`,
        ],
        [
          'neighbour backlog',
          `${fmtInt(neighbour.messages.published)} messages published to it, ${fmtInt(neighbour.messages.attempts)} attempts (all 503), ` +
            `${fmtInt(neighbour.messages.deadLettered)} dead-lettered ${JSON.stringify(session.reasonsFor([NEIGHBOUR]))}, ` +
            `${fmtInt(neighbour.messages.published - neighbour.messages.deadLettered)} still waiting for a retry`,
        ],
      ],
      runs: reports.map(({ run, offsetSeconds }) => ({ run, offsetSeconds })),
      problems,
      notes: [
        `the failing endpoint is ${kind}${options.fifo ? '' : ' (run with --fifo for a FIFO neighbour once FIFO lanes land)'}; healthy endpoints are plain`,
        'ratio 1.00 means the neighbour costs the healthy endpoints nothing; lower is worse',
      ],
      extra: {
        partition,
        partitions,
        neighbourId,
        healthyIds,
        throughputRatio,
        latencyRatio: { p50: p50Ratio, p99: p99Ratio },
        neighbour: neighbour.messages,
      },
    });
  } finally {
    await session.close();
  }
}
