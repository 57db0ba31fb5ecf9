import { Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Kafka } from 'kafkajs';
import type { ZodType } from 'zod';
import { HookbaseConfig } from '@hookbase/config';
import { parseRecord } from '@hookbase/domain';
import { BatchConsumer, ConsumedRecord } from './batch-consumer';
import { consumerGroup } from './topics';

export interface TopicWorkerOptions<T> {
  role: 'fanout' | 'dispatcher' | 'dlq-handler';
  topic: string;
  /** Every record is checked against it; a malformed one is logged and passed over. */
  schema: ZodType<T>;
  partitionsConsumedConcurrently?: number;
}

/**
 * A service's consumer of one topic, as a Nest provider: joins the role's consumer group when the
 * application starts, hands each partition's batch of well-formed records to `handle`, and
 * commits only after `handle` finished (see BatchConsumer). A malformed record never stalls its
 * partition.
 */
export abstract class TopicWorker<T> implements OnApplicationBootstrap, OnApplicationShutdown {
  protected readonly logger = new Logger(this.constructor.name);
  private readonly consumer: BatchConsumer;
  malformedRecords = 0;

  protected constructor(kafka: Kafka, config: HookbaseConfig, options: TopicWorkerOptions<T>) {
    this.consumer = new BatchConsumer(
      kafka,
      {
        groupId: consumerGroup(config.kafka.topicPrefix, options.role),
        sessionTimeoutMs: config.kafka.sessionTimeoutMs,
        topic: options.topic,
        partitionsConsumedConcurrently: options.partitionsConsumedConcurrently,
      },
      (records) => this.handle(this.wellFormed(records, options.schema)),
    );
  }

  /** Does the batch's work; throwing makes the same batch run again later. */
  protected abstract handle(records: T[]): Promise<void>;

  onApplicationBootstrap(): void {
    this.consumer.startInBackground();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.consumer.stop();
  }

  private wellFormed(records: ConsumedRecord[], schema: ZodType<T>): T[] {
    return records.flatMap((record) => {
      const parsed = parseRecord(schema, record.value);
      if (parsed.ok) return [parsed.record];
      this.malformedRecords++;
      this.logger.error(
        `passing over a malformed record at partition ${record.partition} offset ${record.offset}: ${parsed.reason}`,
      );
      return [];
    });
  }
}
