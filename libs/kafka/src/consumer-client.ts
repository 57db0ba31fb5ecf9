import type { IHeaders } from 'kafkajs';

/**
 * The seam between Hookbase's consuming (watermarks, commits after the work, retries, orderly
 * stop: BatchConsumer) and a Kafka client library. One adapter per client;
 * HOOKBASE_KAFKA_CONSUMER picks one at boot.
 */

export interface ConsumedRecord {
  partition: number;
  offset: string;
  key: string | null;
  value: Buffer | null;
  timestamp: string;
  /** The record's headers (trace context among them). */
  headers?: IHeaders;
}

/** What a consumer group member is told to do; the client reads one topic. */
export interface ConsumerSettings {
  groupId: string;
  topic: string;
  sessionTimeoutMs: number;
  /** Batches handed over at once, each of a different partition. */
  partitionsConsumedConcurrently: number;
  maxBytesPerPartition: number;
}

/** A partition's records, in offset order, as read in one fetch. */
export interface FetchedBatch {
  topic: string;
  partition: number;
  records: ConsumedRecord[];
}

/** What the client knows about a batch while it is being handled. */
export interface BatchLiveness {
  /** False once this member no longer owns the partition (rebalance) or is stopping. */
  isActive(): boolean;
  /** Keeps the membership alive during long work (a no-op for clients that beat on their own). */
  heartbeat(): Promise<void>;
}

/** How a client reports to its BatchConsumer. */
export interface ConsumerClientEvents {
  /**
   * Handles a batch; resolves to how many of its records, from the first, were taken. The
   * partition is read on after those, and the rest are read again later: all of them at 0 (the
   * member lost the partition, or is stopping), the tail beyond a window that had less room than
   * the batch had records. The client hands over a partition's next batch only after this
   * resolved.
   */
  batch(batch: FetchedBatch, liveness: BatchLiveness): Promise<number>;
  /**
   * How many more records the partition may take now (`Infinity`: no bound; 0: leave it out of
   * the fetches). A client that can leave out one partition of its fetches asks before each one,
   * so a partition whose window is full waits while the others are read, and asks for about that
   * many records' bytes; one that cannot relies on `batch` waiting and taking part of a batch.
   */
  room(topic: string, partition: number): number;
  /** The member joined its group and holds `partitions` of the topic; progress kept before is void. */
  joined(partitions: number): void;
  /** The member holds no partition now (the group rebalances, or it left). */
  unassigned(): void;
  /** Why the member is not reading now (undefined once that passed). */
  problem(reason: string | undefined): void;
  /**
   * The client gave up for good on `error` and will read nothing more: the BatchConsumer closes it
   * and starts another. `restarting` says the client replaces itself instead.
   */
  failed(error: Error, restarting: boolean): void;
}

/** One member of a consumer group reading one topic, through one client library. */
export interface ConsumerClient {
  /** Joins the group and starts reading; resolves once reading started. */
  start(events: ConsumerClientEvents): Promise<void>;
  /** Commits the next offset to read of each partition, in one request. */
  commit(offsets: readonly { topic: string; partition: number; offset: string }[]): Promise<void>;
  /** Stops reading, leaves the group and closes every connection. */
  close(): Promise<void>;
}
