import { Logger } from '@nestjs/common';
import { Backoff, backoffDelay, OffsetWatermark, windowRoom } from '@hookbase/domain';
import {
  BatchLiveness,
  ConsumedRecord,
  ConsumerClient,
  ConsumerClientEvents,
  FetchedBatch,
} from './consumer-client';

export type { ConsumedRecord } from './consumer-client';

export interface BatchContext {
  topic: string;
  partition: number;
  heartbeat(): Promise<void>;
  /** False once this process no longer owns the partition (rebalance) or is stopping. */
  isActive(): boolean;
}

/** Work on a record that goes on after its batch's handler returned; done settles when it has finished. */
export interface InFlightRecord {
  offset: string;
  done: Promise<void>;
}

/**
 * Handles a batch. In pipelined mode it may return work still under way; every other record of
 * the batch counts as finished when the handler returns.
 */
export type BatchHandler = (
  records: ConsumedRecord[],
  context: BatchContext,
) => Promise<void | InFlightRecord[]>;

export interface BatchConsumerOptions {
  groupId: string;
  topic: string;
  /**
   * Pipelined mode: the next batch of a partition is read while earlier records are still under
   * way, up to this many unfinished records per partition (a batch with more records than the
   * window has room for is taken in part, the rest read again), and the committed offset is the
   * partition's low watermark (its lowest unfinished offset). Unset: one batch at a time, every
   * record finished when the handler returns. Either way the commit follows in the background
   * (within COMMIT_DELAY_MS), never before the records it covers have finished.
   */
  maxUnfinishedPerPartition?: number;
}

/**
 * How long finished records wait for their commit, so the completions of the moment go in one
 * commit. A crash or rebalance replays at most this much more than the work under way.
 */
const COMMIT_DELAY_MS = 50;

/** The longest wait before a consumer client that gave up is replaced (see nextRestartDelay). */
export const MAX_RESTART_DELAY_MS = 5_000;
const RESTART_BACKOFF: Backoff = { baseMs: 1_000, maxMs: MAX_RESTART_DELAY_MS, growth: 'doubling' };

/** A failed batch is tried again after 400 ms, doubling to at most 10 s. */
const BATCH_RETRY_BACKOFF: Backoff = { baseMs: 200, maxMs: 10_000, growth: 'doubling' };

/** One partition's watermark while this process owns it. */
class PartitionProgress {
  readonly watermark = new OffsetWatermark();
  lastOffset: bigint | null = null;
  committed: string | null = null;
  private waiters: (() => void)[] = [];

  constructor(
    readonly topic: string,
    readonly partition: number,
  ) {}

  /** Records must come after the last one read; a replay (seek, rejoin) starts a new progress. */
  follows(offset: string): boolean {
    return this.lastOffset === null || BigInt(offset) > this.lastOffset;
  }

  add(offset: string): void {
    this.watermark.add(offset);
    this.lastOffset = BigInt(offset);
  }

  finish(offset: string): void {
    this.watermark.finish(offset);
    const waiters = this.waiters;
    this.waiters = [];
    waiters.forEach((wake) => wake());
  }

  /** Resolves when some record finishes, or after `ms`. */
  progress(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

/**
 * Runs a handler over batches of one partition and commits records only after the handler
 * finished them, so a crash replays what was not done (at least once). A failing handler is retried
 * with backoff on the same batch while this process owns the partition: nothing is skipped.
 */
export class BatchConsumer {
  private readonly logger: Logger;
  private client: ConsumerClient | undefined;
  private stopping = false;
  private readonly partitions = new Map<string, PartitionProgress>();
  private readonly inFlight = new Set<Promise<void>>();
  /** Batches whose handler is running now: their sends join inFlight when it returns. */
  private readonly batches = new Set<Promise<unknown>>();
  private stopped: Promise<void> | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  /** Partitions whose watermark moved since the last commit, committed together soon. */
  private readonly commitsDue = new Set<string>();
  private commitTimer: NodeJS.Timeout | undefined;
  private restarts = 0;
  /** Why this consumer is not reading now (see membershipProblem); undefined once in its group. */
  private problem: string | undefined = 'not yet in its consumer group';
  /** Partitions of its topic the group gave this consumer at its last join; 0 while out of it. */
  private assigned = 0;

  constructor(
    private readonly createClient: () => ConsumerClient,
    private readonly options: BatchConsumerOptions,
    private readonly handler: BatchHandler,
  ) {
    this.logger = new Logger(`BatchConsumer:${options.groupId}`);
  }

  /** Why this consumer is not reading its topic now, or undefined while it is in its group. */
  membershipProblem(): string | undefined {
    return this.stopping ? 'stopping' : this.problem;
  }

  /** The partitions of its topic this consumer holds now (0 while out of its group). */
  assignment(): { group: string; topic: string; partitions: number } {
    return { group: this.options.groupId, topic: this.options.topic, partitions: this.assigned };
  }

  async start(): Promise<void> {
    const client = this.createClient();
    this.client = client;
    await client.start(this.eventsOf(client));
  }

  /** What `client` reports; reports of a client since replaced are ignored. */
  private eventsOf(client: ConsumerClient): ConsumerClientEvents {
    const current = () => client === this.client;
    return {
      batch: (batch, liveness) => this.takeBatch(batch, liveness),
      room: (topic, partition) => this.room(this.partitions.get(`${topic}:${partition}`)),
      // After a rebalance the partitions are read again from their committed offsets: progress
      // kept from before is dropped, so late completions never commit for a partition read anew.
      joined: (partitions) => {
        if (!current()) return;
        this.restarts = 0;
        this.problem = undefined;
        this.assigned = partitions;
        this.forgetPartitions();
      },
      // A rebalance starts (or the member left): what finished is committed at once, so that the
      // partitions' next owners start after it.
      unassigned: () => {
        if (!current()) return;
        this.assigned = 0;
        this.commitDueNow();
      },
      problem: (reason) => {
        if (current() && !this.stopping) this.problem = reason;
      },
      // A client that gave up for good would leave this worker reading nothing until the process
      // restarted: a fresh one takes its place instead, after a backoff.
      failed: (error, restarting) => {
        if (!current()) return;
        this.assigned = 0;
        if (!this.stopping) this.problem = `stopped by ${error.name}: ${error.message}`;
        if (restarting || this.stopping) return;
        const delay = this.nextRestartDelay();
        this.logger.error(
          `consumer stopped by ${error.name}: ${error.message}; a new one starts in ${delay} ms`,
        );
        this.restartTimer = setTimeout(() => void this.restart(), delay);
      },
    };
  }

  /** Hands a fetched batch to the handler; resolves to how many of its records were taken. */
  private async takeBatch(batch: FetchedBatch, liveness: BatchLiveness): Promise<number> {
    if (batch.records.length === 0) return 0;
    const context: BatchContext = {
      topic: batch.topic,
      partition: batch.partition,
      heartbeat: () => liveness.heartbeat(),
      isActive: () => !this.stopping && liveness.isActive(),
    };
    const running = this.runBatch(batch.records, context);
    this.batches.add(running);
    try {
      return await running;
    } finally {
      this.batches.delete(running);
    }
  }

  /**
   * How many more records a partition may take now (see `windowRoom`): no bound outside pipelined
   * mode, none while stopping.
   */
  private room(progress: PartitionProgress | undefined): number {
    if (this.stopping) return 0;
    const limit = this.options.maxUnfinishedPerPartition;
    if (limit === undefined) return Number.POSITIVE_INFINITY;
    return windowRoom(progress?.watermark.unfinished ?? 0, limit);
  }

  /**
   * As many of the batch's records as the partition's window has room for join its watermark and
   * the handler runs on them; resolves to their count once it returns (the rest are read again).
   * Records it returned as under way finish later (pipelined mode); the others are finished now.
   * Commits follow the low watermark in the background, coalesced, so the partition's next batch
   * never waits for a commit.
   */
  private async runBatch(batch: ConsumedRecord[], context: BatchContext): Promise<number> {
    const key = `${context.topic}:${context.partition}`;
    let progress = this.partitions.get(key);
    if (!progress || !progress.follows(batch[0].offset)) {
      progress = new PartitionProgress(context.topic, context.partition);
      this.partitions.set(key, progress);
    }
    // Bounded memory: a partition whose window is full waits for some of it to finish (a client
    // that leaves full partitions out of its fetches never gets here with one).
    while (this.room(progress) === 0 && context.isActive()) {
      await progress.progress(1_000);
      await context.heartbeat().catch(() => undefined);
    }
    if (!context.isActive()) return 0;
    const room = this.room(progress);
    const records = batch.length > room ? batch.slice(0, room) : batch;
    records.forEach((record) => progress.add(record.offset));
    const started = await this.runWithRetry(records, context);
    if (started === false) return 0;
    const underWay = new Set((started ?? []).map((work) => work.offset));
    for (const record of records) {
      if (!underWay.has(record.offset)) progress.finish(record.offset);
    }
    for (const work of started ?? []) {
      const tracked = work.done.then(
        () => {
          progress.finish(work.offset);
          this.scheduleCommit(key);
        },
        (error: Error) => {
          // Left unfinished: the partition's next owner (or this process after a restart)
          // reads it again from the committed offset.
          this.logger.warn(
            `partition ${context.partition} offset ${work.offset} left unfinished: ${error.message}`,
          );
        },
      );
      this.inFlight.add(tracked);
      void tracked.finally(() => this.inFlight.delete(tracked));
    }
    this.scheduleCommit(key);
    return records.length;
  }

  /**
   * Commits a partition's low watermark soon, coalescing the completions of the moment and those
   * of every other partition: one commit request for all of them, not one per partition. Each
   * request shares the consumer's connection with its fetches, and the broker answers a
   * connection's requests one at a time.
   */
  private scheduleCommit(key: string): void {
    this.commitsDue.add(key);
    if (this.commitTimer) return;
    this.commitTimer = setTimeout(() => {
      this.commitTimer = undefined;
      const keys = [...this.commitsDue];
      this.commitsDue.clear();
      void this.commit(keys);
    }, COMMIT_DELAY_MS);
  }

  /** Commits what is due without waiting for the timer. */
  private commitDueNow(): void {
    if (this.commitsDue.size === 0) return;
    clearTimeout(this.commitTimer);
    this.commitTimer = undefined;
    const keys = [...this.commitsDue];
    this.commitsDue.clear();
    void this.commit(keys);
  }

  /** Commits the low watermarks of these partitions that moved, in one request. */
  private async commit(keys: readonly string[]): Promise<void> {
    if (!this.client) return;
    const moved: { progress: PartitionProgress; offset: string }[] = [];
    for (const key of keys) {
      const progress = this.partitions.get(key);
      const offset = progress?.watermark.committable() ?? null;
      if (progress && offset !== null && offset !== progress.committed) {
        moved.push({ progress, offset });
      }
    }
    if (moved.length === 0) return;
    try {
      await this.client.commit(
        moved.map(({ progress, offset }) => ({
          topic: progress.topic,
          partition: progress.partition,
          offset,
        })),
      );
      for (const { progress, offset } of moved) progress.committed = offset;
    } catch (error) {
      const partitions = moved.map(({ progress }) => progress.partition).join(', ');
      this.logger.warn(`commit of partitions ${partitions} failed: ${(error as Error).message}`);
    }
  }

  private forgetPartitions(): void {
    clearTimeout(this.commitTimer);
    this.commitTimer = undefined;
    this.commitsDue.clear();
    this.partitions.clear();
  }

  private async runWithRetry(
    records: ConsumedRecord[],
    context: BatchContext,
  ): Promise<void | InFlightRecord[] | false> {
    for (let attempt = 1; context.isActive(); attempt++) {
      try {
        return await this.handler(records, context);
      } catch (error) {
        const delay = backoffDelay(BATCH_RETRY_BACKOFF, attempt);
        this.logger.error(
          `partition ${context.partition} offsets ${records[0].offset}..${records[records.length - 1].offset}` +
            ` failed (attempt ${attempt}, retrying in ${delay} ms): ${(error as Error).message}`,
        );
        await new Promise((resolve) => setTimeout(resolve, delay));
        await context.heartbeat().catch(() => undefined);
      }
    }
    return false;
  }

  /**
   * Starts without holding up the process's boot: joining the group can wait out a crashed
   * member's session, and the HTTP side (ingest, API) must not wait with it. A consumer that
   * cannot start at all ends the process, so its supervisor restarts it.
   */
  startInBackground(): void {
    this.start().catch((error: Error) => {
      if (this.stopping) return;
      this.logger.fatal(`consumer could not start: ${error.message}`);
      process.exit(70);
    });
  }

  /**
   * 1 s, doubling to at most 5 s. A try costs one refused connection while Kafka is away, and the
   * cap bounds how long a worker stays idle once Kafka is back: a longer one (30 s) let an
   * outage of a minute leave the fan-out or the dispatcher reading nothing for half a minute more.
   */
  private nextRestartDelay(): number {
    const delay = backoffDelay(RESTART_BACKOFF, this.restarts);
    this.restarts++;
    return delay;
  }

  /** Replaces a client that gave up; tries again (with a longer backoff) if it fails. */
  private async restart(): Promise<void> {
    if (this.stopping) return;
    await this.client?.close().catch(() => undefined);
    // What the old client had read is read again from the committed offsets.
    this.forgetPartitions();
    try {
      await this.start();
    } catch (error) {
      await this.client?.close().catch(() => undefined);
      if (this.stopping) return;
      const delay = this.nextRestartDelay();
      this.logger.error(
        `consumer could not start again (${(error as Error).message}); trying in ${delay} ms`,
      );
      this.restartTimer = setTimeout(() => void this.restart(), delay);
    }
  }

  /**
   * Stops reading and leaves the group. An orderly stop (a deadline, epoch ms) lets the batches
   * being taken in and the work under way finish until then, commits what finished, and only then
   * leaves, so the partitions' next owner starts right after the last finished record. Work still
   * under way at the deadline stays uncommitted and is read again by the next owner. Idempotent.
   */
  stop(deadline = Date.now() + 10_000): Promise<void> {
    this.stopped ??= this.stopInOrder(deadline);
    return this.stopped;
  }

  private async stopInOrder(deadline: number): Promise<void> {
    this.stopping = true;
    this.assigned = 0;
    clearTimeout(this.restartTimer);
    // Handlers running now may still start sends: they join the work waited for.
    await untilSettledOr(Promise.allSettled([...this.batches]), deadline);
    if (this.inFlight.size > 0) {
      const finished = await untilSettledOr(Promise.allSettled([...this.inFlight]), deadline);
      if (!finished) {
        this.logger.warn(
          `${this.inFlight.size} records still under way at the drain deadline: left for the next owner`,
        );
      }
    }
    clearTimeout(this.commitTimer);
    this.commitTimer = undefined;
    this.commitsDue.clear();
    await this.commit([...this.partitions.keys()]);
    // Leaving the group (not waiting out the session) lets the others take the partitions now.
    await this.client?.close().catch(() => undefined);
  }
}

/** Waits for `work` until the deadline (epoch ms); true when it settled in time. */
async function untilSettledOr(work: Promise<unknown>, deadline: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()));
  });
  try {
    return await Promise.race([work.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}
