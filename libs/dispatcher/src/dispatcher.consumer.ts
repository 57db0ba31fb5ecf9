import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnApplicationShutdown,
} from '@nestjs/common';
import { Kafka } from 'kafkajs';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import { deliveryRecordSchema, parseRecord } from '@hookbase/domain';
import {
  BatchConsumer,
  ConsumedRecord,
  consumerGroup,
  KAFKA,
  TOPICS,
  TopicNames,
} from '@hookbase/kafka';
import { MessageRepository } from '@hookbase/persistence';
import { DeliveryService, PendingDelivery } from './delivery.service';

/**
 * Consumes `<prefix>.deliveries`. Each batch is one partition's records; its offsets are committed
 * once every message in it is finished or handed to the retry schedule. Messages already finished
 * or owned by the retry schedule (seen again after a restart) are recognised by id and skipped.
 */
@Injectable()
export class DispatcherConsumer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(DispatcherConsumer.name);
  private readonly consumer: BatchConsumer;

  constructor(
    @Inject(KAFKA) kafka: Kafka,
    @Inject(TOPICS) topics: TopicNames,
    @Inject(HOOKBASE_CONFIG) config: HookbaseConfig,
    private readonly messages: MessageRepository,
    private readonly delivery: DeliveryService,
  ) {
    this.consumer = new BatchConsumer(
      kafka,
      {
        groupId: consumerGroup(config.kafka.topicPrefix, 'dispatcher'),
        sessionTimeoutMs: config.kafka.sessionTimeoutMs,
        topic: topics.deliveries,
        partitionsConsumedConcurrently: 12,
      },
      (records) => this.dispatch(records),
    );
  }

  onApplicationBootstrap(): void {
    this.consumer.startInBackground();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.consumer.stop();
  }

  private async dispatch(records: ConsumedRecord[]): Promise<void> {
    const parsed = records.flatMap((record) => {
      const result = parseRecord(deliveryRecordSchema, record.value);
      if (result.ok) return [result.record];
      this.logger.error(
        `passing over malformed delivery at offset ${record.offset}: ${result.reason}`,
      );
      return [];
    });
    const states = await this.messages.deliveryStates(parsed.map((d) => d.messageId));
    const seen = new Set<string>();
    const pending: PendingDelivery[] = [];
    for (const record of parsed) {
      const state = states.get(record.messageId);
      // Only messages still on the deliveries path: new ones, or ones interrupted mid-attempt.
      const onThisPath =
        state !== undefined &&
        (state.status === 'pending' || state.status === 'in_flight') &&
        state.nextAttemptAt === null;
      if (!onThisPath || seen.has(record.messageId)) continue;
      seen.add(record.messageId);
      pending.push({
        messageId: record.messageId,
        webhookId: record.messageId,
        source: 'new',
        eventId: record.eventId,
        organizationId: record.organizationId,
        endpointId: record.endpointId,
        eventType: record.eventType,
        payload: record.payload,
        acceptedAt: new Date(record.acceptedAt),
        attemptsMade: state.attempts,
      });
    }
    await this.delivery.deliver(pending);
  }
}
