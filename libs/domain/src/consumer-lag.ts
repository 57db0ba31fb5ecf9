/** One partition's offsets as Kafka reports them (strings, since offsets are 64-bit). */
export interface PartitionOffsets {
  /** Log-end offset: the offset the next record will get. */
  high: string;
  /** Oldest offset still in the log. */
  low: string;
  /** The group's committed offset (the next to read), or `-1` when it never committed. */
  committed: string;
}

/**
 * Records a consumer group has not yet committed on a partition: log-end minus committed. A group
 * that never committed reads from the oldest record still kept (our consumers start from the
 * beginning), so its lag counts from there; a committed offset below the oldest one kept (records
 * deleted by retention) counts from there too: those records can no longer be read.
 */
export function partitionLag(offsets: PartitionOffsets): number {
  const high = BigInt(offsets.high);
  const low = BigInt(offsets.low);
  const committed = BigInt(offsets.committed);
  const from = committed < 0n || committed < low ? low : committed;
  return from >= high ? 0 : Number(high - from);
}
