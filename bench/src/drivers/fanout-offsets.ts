/** A record the bench produced onto `<prefix>.events`, waiting for the fan-out to pass it. */
export interface ProducedRecord {
  seq: number;
  eventId: string;
  offset: number;
}

/**
 * Records produced onto `<prefix>.events`, per partition in offset order, until the fan-out's
 * committed offset passes them. The fan-out commits a batch's offsets only once the batch's
 * events (and their messages) are recorded in PostgreSQL and its deliveries are acknowledged by
 * Kafka, so "committed past the record" is "accepted by Hookbase", read from Kafka itself.
 */
export class PendingOffsets {
  private readonly partitions = new Map<number, ProducedRecord[]>();
  private count = 0;

  /**
   * The records of one produce request to `partition`, in the order sent: Kafka gave them the
   * offsets from `baseOffset` on.
   */
  add(partition: number, baseOffset: number, records: readonly Omit<ProducedRecord, 'offset'>[]) {
    let queue = this.partitions.get(partition);
    if (!queue) this.partitions.set(partition, (queue = []));
    const last = queue.at(-1);
    if (last && baseOffset <= last.offset)
      throw new Error(
        `partition ${partition}: offset ${baseOffset} added after ${last.offset} (one send in flight keeps them in order)`,
      );
    records.forEach((record, i) => queue.push({ ...record, offset: baseOffset + i }));
    this.count += records.length;
  }

  /** The committed offset is the next one to read: every record below it is done. */
  passed(partition: number, committed: number): ProducedRecord[] {
    const queue = this.partitions.get(partition);
    if (!queue || queue.length === 0 || queue[0].offset >= committed) return [];
    let end = 0;
    while (end < queue.length && queue[end].offset < committed) end++;
    const done = queue.splice(0, end);
    this.count -= done.length;
    return done;
  }

  get size(): number {
    return this.count;
  }
}

/**
 * Chooses organizations so that `wanted` of them spread over the partitions as evenly as keys
 * allow: each candidate (its partition under the murmur2 partitioner) is kept while its
 * partition has fewer than ⌈wanted ÷ partitions⌉.
 */
export class SpreadPicker {
  private readonly counts: number[];
  private readonly perPartition: number;
  kept = 0;

  constructor(
    readonly partitions: number,
    readonly wanted: number,
  ) {
    this.counts = new Array<number>(partitions).fill(0);
    this.perPartition = Math.ceil(wanted / partitions);
  }

  offer(partition: number): boolean {
    if (this.done || this.counts[partition] >= this.perPartition) return false;
    this.counts[partition]++;
    this.kept++;
    return true;
  }

  get done(): boolean {
    return this.kept >= this.wanted;
  }

  /** Partitions that got at least one organization. */
  get covered(): number {
    return this.counts.filter((count) => count > 0).length;
  }
}
