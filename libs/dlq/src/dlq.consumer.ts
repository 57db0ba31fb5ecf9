import { Inject, Injectable } from '@nestjs/common';
import { Kafka } from 'kafkajs';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import { DlqRecord, dlqRecordSchema } from '@hookbase/domain';
import { KAFKA, TopicNames, TOPICS, TopicWorker } from '@hookbase/kafka';
import { DlqRepository } from '@hookbase/persistence';

/** Records dead-lettered messages in PostgreSQL, where the API lists them and retries them. */
@Injectable()
export class DlqConsumer extends TopicWorker<DlqRecord> {
  constructor(
    @Inject(KAFKA) kafka: Kafka,
    @Inject(TOPICS) topics: TopicNames,
    @Inject(HOOKBASE_CONFIG) config: HookbaseConfig,
    private readonly entries: DlqRepository,
  ) {
    super(kafka, config, { role: 'dlq-handler', topic: topics.dlq, schema: dlqRecordSchema });
  }

  protected async handle(records: DlqRecord[]): Promise<void> {
    await this.entries.record(records);
  }
}
