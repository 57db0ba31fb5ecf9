import { HEALTHY } from '../../core/behaviour';
import { now } from '../../core/clock';
import { createEndpoints, Tenant } from '../../core/hookbase-api';
import { ratio } from './figures';
import { Ledger, LedgerSink } from '../../core/ledger';
import { measureRawProduce, RawProduceResult } from './bounds';
import { fmtInt, fmtRate } from '../../core/report';
import { RunReport } from '../../core/result';
import { BenchSession, RunWindow } from '../../core/session';

/**
 * What the four ingest scenarios share around their load: step-numbered ledgers for deliveries,
 * the optional endpoints, the raw Kafka produce baseline, and the wait for deliveries at the end.
 */

/** `count` subscribed endpoints of the tenant, numbered from `first`; their indexes. */
export async function addIngestEndpoints(
  session: BenchSession,
  tenant: Tenant,
  count: number,
  sink: LedgerSink,
  first = 0,
): Promise<Set<number>> {
  const ids = await createEndpoints(
    tenant,
    Array.from({ length: count }, (_, i) => ({ url: `${session.receiverUrl}/e/${first + i}` })),
    8,
  );
  ids.forEach((id, i) => session.addEndpoint(id, first + i, sink, HEALTHY));
  return new Set(ids.map((_, i) => first + i));
}

/** The raw produce baseline stops here at the latest, whatever --records asks. */
const RAW_SECONDS = 10;

/** The raw kafkajs produce baseline (bounds.ts), keyed as the scenario's events are. */
export async function rawBaseline(
  session: BenchSession,
  keys: readonly string[],
): Promise<RawProduceResult> {
  const { options, cleanup, progress, deadlineMs } = session.ctx;
  const partitions = await session.kafka.partitionCount(`${session.stack.topicPrefix}.events`);
  let acked = 0;
  session.setPhase(
    'raw kafkajs produce',
    () => `${fmtInt(acked)} records acknowledged`,
    () => acked / options.records,
  );
  const raw = await measureRawProduce(
    {
      brokers: options.brokers,
      partitions,
      keys,
      payloadBytes: options.payloadBytes,
      records: options.records,
      batch: options.batch,
      deadlineMs: Math.min(deadlineMs, now() + RAW_SECONDS * 1000),
    },
    cleanup,
    (records) => (acked = records),
  );
  progress.note(
    `  raw kafkajs produce: ${fmtRate(raw.perSecond)} records/s (${Math.round(raw.recordBytes)} B, ${raw.batch} per send)`,
  );
  return raw;
}

/** How the raw baseline was measured, in one line. */
export function describeRaw(raw: RawProduceResult): string {
  const spread =
    raw.keys === 1
      ? `one key (the organization), so one of ${raw.partitions} partitions`
      : `${raw.keys} keys (the organizations) over ${raw.partitions} partitions`;
  return `${fmtRate(raw.perSecond)} records/s, ${raw.mbPerSecond.toFixed(1)} MB/s (${raw.client}, idempotent, acks=all, ${fmtInt(raw.records)} records of ${Math.round(raw.recordBytes)} B, ${raw.batch} per send, ${spread}${raw.stoppedByDeadline ? '; stopped at its time bound' : ''})`;
}

/** The headline rows every ingest scenario ends with: the raw bound and the ratio to it. */
export function rawHeadline(raw: RawProduceResult, acceptedPerSecond: number): [string, string][] {
  return [
    ['raw Kafka produce', describeRaw(raw)],
    ['accepted ÷ raw', ratio(acceptedPerSecond, raw.perSecond)],
  ];
}

/** A run as measured when its load ended, with what is needed to measure it again. */
export interface MeasuredRun {
  run: RunReport;
  ledger: Ledger;
  window: RunWindow;
}

/**
 * After the load: with endpoints, waits until every published message is delivered or
 * dead-lettered (bounded by --drain-timeout), then measures the deliveries of each run again
 * (throughput, latency, timeline and ledger), keeping what was measured of the load itself (rates,
 * CPU). Returns the problems that void the run, each labelled with its run.
 */
export async function settleRuns(
  session: BenchSession,
  measured: readonly MeasuredRun[],
): Promise<string[]> {
  const { options } = session.ctx;
  const ledgers = measured.map((m) => m.ledger);
  const problems: string[] = [];
  if (options.endpoints > 0) {
    session.watch('draining', ledgers, null);
    const settled = await session.drain(ledgers, now() + options.drainTimeoutSeconds * 1000);
    if (!settled)
      problems.push(
        `deliveries did not settle within ${options.drainTimeoutSeconds} s after the load`,
      );
    for (const { run, ledger, window } of measured) {
      const again = await session.report(window, ledger);
      // In place: the scenario's result holds the same objects.
      Object.assign(run, {
        ledger: again.ledger,
        throughputPerSecond: again.throughputPerSecond,
        peakDeliveredPerSecond: again.peakDeliveredPerSecond,
        latency: again.latency,
        timeline: again.timeline,
      });
    }
  }
  for (const { run } of measured)
    problems.push(...run.ledger.problems.map((p) => `${run.label}: ${p}`));
  return problems;
}
