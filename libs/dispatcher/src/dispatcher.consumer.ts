import { Inject, Injectable } from '@nestjs/common';
import { Kafka } from 'kafkajs';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import { DeliveryRecord, deliveryRecordSchema } from '@hookbase/domain';
import { KAFKA, TopicNames, TOPICS, TopicWorker } from '@hookbase/kafka';
import { MessageRepository } from '@hookbase/persistence';
import { DeliveryService, PendingDelivery } from './delivery.service';

/**
 * Consumes `<prefix>.deliveries`. Each batch is one partition's records; its offsets are committed
 * once every message in it is finished or handed to the retry schedule. Messages already finished
 * or owned by the retry schedule (seen again after a restart) are recognised by id and skipped.
 */
@Injectable()
export class DispatcherConsumer extends TopicWorker<DeliveryRecord> {
  constructor(
    @Inject(KAFKA) kafka: Kafka,
    @Inject(TOPICS) topics: TopicNames,
    @Inject(HOOKBASE_CONFIG) config: HookbaseConfig,
    private readonly messages: MessageRepository,
    private readonly delivery: DeliveryService,
  ) {
    super(kafka, config, {
      role: 'dispatcher',
      topic: topics.deliveries,
      schema: deliveryRecordSchema,
      partitionsConsumedConcurrently: 12,
    });
  }

  protected async handle(records: DeliveryRecord[]): Promise<void> {
    const states = await this.messages.deliveryStates(records.map((d) => d.messageId));
    const seen = new Set<string>();
    const pending: PendingDelivery[] = [];
    for (const record of records) {
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
