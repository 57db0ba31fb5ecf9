import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnApplicationShutdown,
} from '@nestjs/common';
import { Kafka } from 'kafkajs';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import { dlqRecordSchema, parseRecord } from '@hookbase/domain';
import {
  BatchConsumer,
  ConsumedRecord,
  consumerGroup,
  KAFKA,
  TOPICS,
  TopicNames,
} from '@hookbase/kafka';
import { DlqRepository } from '@hookbase/persistence';

/** Records dead-lettered messages in PostgreSQL, where the API lists them and retries them. */
@Injectable()
export class DlqConsumer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(DlqConsumer.name);
  private readonly consumer: BatchConsumer;

  constructor(
    @Inject(KAFKA) kafka: Kafka,
    @Inject(TOPICS) topics: TopicNames,
    @Inject(HOOKBASE_CONFIG) config: HookbaseConfig,
    private readonly entries: DlqRepository,
  ) {
    this.consumer = new BatchConsumer(
      kafka,
      {
        groupId: consumerGroup(config.kafka.topicPrefix, 'dlq-handler'),
        sessionTimeoutMs: config.kafka.sessionTimeoutMs,
        topic: topics.dlq,
      },
      (records) => this.record(records),
    );
  }

  onApplicationBootstrap(): void {
    this.consumer.startInBackground();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.consumer.stop();
  }

  private async record(records: ConsumedRecord[]): Promise<void> {
    const entries = records.flatMap((record) => {
      const parsed = parseRecord(dlqRecordSchema, record.value);
      if (parsed.ok) return [parsed.record];
      this.logger.error(
        `passing over malformed DLQ record at offset ${record.offset}: ${parsed.reason}`,
      );
      return [];
    });
    await this.entries.record(entries);
  }
}
