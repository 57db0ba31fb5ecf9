import { Logger } from '@nestjs/common';
import { Consumer, Kafka } from 'kafkajs';

export interface ConsumedRecord {
  partition: number;
  offset: string;
  key: string | null;
  value: Buffer | null;
  timestamp: string;
}

export interface BatchContext {
  topic: string;
  partition: number;
  heartbeat(): Promise<void>;
  /** False once this process no longer owns the partition (rebalance) or is stopping. */
  isActive(): boolean;
}

export type BatchHandler = (records: ConsumedRecord[], context: BatchContext) => Promise<void>;

export interface BatchConsumerOptions {
  groupId: string;
  sessionTimeoutMs: number;
  topic: string;
  partitionsConsumedConcurrently?: number;
  maxBytesPerPartition?: number;
}

/**
 * Runs a handler over batches of one partition and commits the batch only after the handler
 * finished, so a crash replays what was not done (at least once). A failing handler is retried
 * with backoff on the same batch while this process owns the partition: nothing is skipped.
 */
export class BatchConsumer {
  private readonly logger: Logger;
  private consumer: Consumer | undefined;
  private stopping = false;

  constructor(
    private readonly kafka: Kafka,
    private readonly options: BatchConsumerOptions,
    private readonly handler: BatchHandler,
  ) {
    this.logger = new Logger(`BatchConsumer:${options.groupId}`);
  }

  async start(): Promise<void> {
    const consumer = this.kafka.consumer({
      groupId: this.options.groupId,
      allowAutoTopicCreation: false,
      sessionTimeout: this.options.sessionTimeoutMs,
      heartbeatInterval: Math.max(500, Math.floor(this.options.sessionTimeoutMs / 10)),
      maxBytesPerPartition: this.options.maxBytesPerPartition ?? 1024 * 1024,
      maxWaitTimeInMs: 100,
    });
    this.consumer = consumer;
    await consumer.connect();
    await consumer.subscribe({ topic: this.options.topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: this.options.partitionsConsumedConcurrently ?? 1,
      eachBatch: async ({ batch, heartbeat, isRunning, isStale, resolveOffset }) => {
        if (batch.messages.length === 0) return;
        const context: BatchContext = {
          topic: batch.topic,
          partition: batch.partition,
          heartbeat,
          isActive: () => !this.stopping && isRunning() && !isStale(),
        };
        const records: ConsumedRecord[] = batch.messages.map((message) => ({
          partition: batch.partition,
          offset: message.offset,
          key: message.key ? message.key.toString() : null,
          value: message.value,
          timestamp: message.timestamp,
        }));
        const done = await this.runWithRetry(records, context);
        if (!done) return;
        const last = batch.messages[batch.messages.length - 1].offset;
        resolveOffset(last);
        await consumer.commitOffsets([
          {
            topic: batch.topic,
            partition: batch.partition,
            offset: (BigInt(last) + 1n).toString(),
          },
        ]);
      },
    });
  }

  private async runWithRetry(records: ConsumedRecord[], context: BatchContext): Promise<boolean> {
    for (let attempt = 1; context.isActive(); attempt++) {
      try {
        await this.handler(records, context);
        return true;
      } catch (error) {
        const delay = Math.min(200 * 2 ** Math.min(attempt, 6), 10_000);
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

  async stop(): Promise<void> {
    this.stopping = true;
    await this.consumer?.disconnect().catch(() => undefined);
  }
}
