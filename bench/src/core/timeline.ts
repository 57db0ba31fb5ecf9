import { percentile } from './stats';

/** One bucket of a run's time series (rates per second, latencies in ms). */
export interface TimelinePoint {
  /** Seconds from the run's start to the bucket's start. */
  t: number;
  /** Messages published per second (events accepted × their recipients; events for ingest-rest). */
  acceptedPerSecond: number;
  deliveredPerSecond: number;
  latencyP50Ms: number | null;
  latencyP99Ms: number | null;
  /** Accepted − scheduled, by acceptance time: the ingest side's latency. */
  acceptP50Ms: number | null;
  acceptP99Ms: number | null;
}

export interface TimelineInput {
  startMs: number;
  endMs: number;
  bucketMs: number;
  /** When each event was accepted, and how many messages it published (1 to count events). */
  accepted: readonly { at: number; weight: number; latencyMs: number }[];
  /** When each message was first delivered, and its latency (received − scheduled). */
  deliveries: readonly { at: number; latencyMs: number }[];
}

function bucketIndex(at: number, startMs: number, bucketMs: number, buckets: number): number {
  const index = Math.floor((at - startMs) / bucketMs);
  return Math.min(Math.max(index, 0), buckets - 1);
}

/**
 * Throughput and latency over time, bucketed by when things happened: accepted events by their
 * acceptance time, deliveries (and their latency) by their arrival at the receiver.
 */
export function buildTimeline(input: TimelineInput): TimelinePoint[] {
  const { startMs, endMs, bucketMs } = input;
  if (!(bucketMs > 0)) throw new Error('bucket must be positive');
  const buckets = Math.max(1, Math.ceil((endMs - startMs) / bucketMs));
  const accepted = new Array<number>(buckets).fill(0);
  const acceptLatencies: number[][] = Array.from({ length: buckets }, () => []);
  const latencies: number[][] = Array.from({ length: buckets }, () => []);
  for (const { at, weight, latencyMs } of input.accepted) {
    const index = bucketIndex(at, startMs, bucketMs, buckets);
    accepted[index] += weight;
    acceptLatencies[index].push(latencyMs);
  }
  for (const delivery of input.deliveries) {
    latencies[bucketIndex(delivery.at, startMs, bucketMs, buckets)].push(delivery.latencyMs);
  }
  return accepted.map((count, index) => {
    // The last bucket may be cut short by the end of the run: its rate is over what it covered.
    const covered = Math.min(bucketMs, endMs - (startMs + index * bucketMs));
    const perSecond = 1000 / (covered > bucketMs / 10 ? covered : bucketMs);
    const sorted = Float64Array.from(latencies[index]).sort();
    const acceptSorted = Float64Array.from(acceptLatencies[index]).sort();
    return {
      t: (index * bucketMs) / 1000,
      acceptedPerSecond: count * perSecond,
      deliveredPerSecond: sorted.length * perSecond,
      latencyP50Ms: sorted.length > 0 ? percentile(sorted, 50) : null,
      latencyP99Ms: sorted.length > 0 ? percentile(sorted, 99) : null,
      acceptP50Ms: acceptSorted.length > 0 ? percentile(acceptSorted, 50) : null,
      acceptP99Ms: acceptSorted.length > 0 ? percentile(acceptSorted, 99) : null,
    };
  });
}

/** The busiest bucket's delivery rate: the peak a run reached, beside its average. */
export function peakDeliveredPerSecond(timeline: readonly TimelinePoint[]): number {
  return timeline.reduce((peak, point) => Math.max(peak, point.deliveredPerSecond), 0);
}
