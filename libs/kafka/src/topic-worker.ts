import { Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Kafka } from 'kafkajs';
import { HookbaseConfig } from '@hookbase/config';
import { parseRecord, Parser } from '@hookbase/domain';
import { Drainable, DrainsOnShutdown, ProbesReadiness, ReadinessProbe } from '@hookbase/runtime';
import { BatchConsumer, BatchContext, ConsumedRecord, InFlightRecord } from './batch-consumer';
import { createConsumerClient } from './consumer-clients';
import { consumerGroup } from './topics';

/** A record that could not be read as its topic's schema, with why. */
export interface RejectedRecord {
  record: ConsumedRecord;
  reason: string;
}

export interface TopicWorkerOptions<T> {
  role: 'fanout' | 'dispatcher' | 'dlq-handler';
  topic: string;
  /** Every record is checked against it; a malformed one is logged and passed over. */
  schema: Parser<T>;
  partitionsConsumedConcurrently?: number;
  /** Pipelined mode with a low-watermark commit (see BatchConsumerOptions). */
  maxUnfinishedPerPartition?: number;
}

/**
 * A service's consumer of one topic, as a Nest provider: joins the role's consumer group when the
 * application starts, hands each partition's batch of well-formed records to `handle`, and
 * commits only after `handle` finished (see BatchConsumer). A malformed record never stalls its
 * partition.
 */
@ProbesReadiness()
@DrainsOnShutdown()
export abstract class TopicWorker<T>
  implements OnApplicationBootstrap, OnApplicationShutdown, ReadinessProbe, Drainable
{
  protected readonly logger = new Logger(this.constructor.name);
  private readonly consumer: BatchConsumer;
  readonly readinessName: string;
  readonly drainName: string;

  protected constructor(kafka: Kafka, config: HookbaseConfig, options: TopicWorkerOptions<T>) {
    this.readinessName = `kafka-consumer:${options.role}`;
    this.drainName = `${options.role} consumer of ${options.topic}`;
    const settings = {
      groupId: consumerGroup(config.kafka.topicPrefix, options.role),
      topic: options.topic,
      sessionTimeoutMs: config.kafka.sessionTimeoutMs,
      partitionsConsumedConcurrently: options.partitionsConsumedConcurrently ?? 1,
      maxBytesPerPartition: 1024 * 1024,
    };
    this.consumer = new BatchConsumer(
      () => createConsumerClient(config, kafka, options.role, settings),
      { ...settings, maxUnfinishedPerPartition: options.maxUnfinishedPerPartition },
      (records, context) => this.process(records, context, options.schema),
    );
  }

  /**
   * Does the batch's work on its well-formed records (`sources[i]` is where `records[i]` was
   * read); throwing makes the same batch run again later. In pipelined mode it may return work
   * still under way (by source offset).
   */
  protected abstract handle(
    records: T[],
    sources: ConsumedRecord[],
    context: BatchContext,
  ): Promise<void | InFlightRecord[]>;

  /** What becomes of malformed records; by default they are logged and counted. */
  protected async passOver(rejected: RejectedRecord[]): Promise<void> {
    for (const { record, reason } of rejected) {
      this.logger.error(
        `passing over a malformed record at partition ${record.partition} offset ${record.offset}: ${reason}`,
      );
    }
  }

  /** The partitions of its topic this worker's consumer holds now, in its group. */
  assignment(): { group: string; topic: string; partitions: number } {
    return this.consumer.assignment();
  }

  /** Ready while its consumer is in its group (it reads nothing otherwise). */
  async checkReadiness(): Promise<string | undefined> {
    return this.consumer.membershipProblem();
  }

  onApplicationBootstrap(): void {
    this.consumer.startInBackground();
  }

  /** Stops reading; the records under way finish until the deadline and are committed. */
  async drain(deadline: number): Promise<void> {
    await this.consumer.stop(deadline);
  }

  /** Without a drain first (a test closing its module), stops as before: 10 s at most. */
  async onApplicationShutdown(): Promise<void> {
    await this.consumer.stop();
  }

  private async process(
    records: ConsumedRecord[],
    context: BatchContext,
    schema: Parser<T>,
  ): Promise<void | InFlightRecord[]> {
    const good: T[] = [];
    const sources: ConsumedRecord[] = [];
    const rejected: RejectedRecord[] = [];
    for (const record of records) {
      const parsed = parseRecord(schema, record.value);
      if (parsed.ok) {
        good.push(parsed.record);
        sources.push(record);
      } else rejected.push({ record, reason: parsed.reason });
    }
    if (rejected.length > 0) await this.passOver(rejected);
    return this.handle(good, sources, context);
  }
}
