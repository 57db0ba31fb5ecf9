import { Inject, Injectable } from '@nestjs/common';
import { Kafka } from 'kafkajs';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import { DeliveryRecord, deliveryRecordSchema } from '@hookbase/domain';
import { ConsumedRecord, KAFKA, TopicNames, TOPICS, TopicWorker } from '@hookbase/kafka';
import { FifoLaneRepository, MessageRepository } from '@hookbase/persistence';
import { DeliveryService, PendingDelivery } from './delivery.service';
import { FifoLaneRunner } from './fifo-lane-runner';

/**
 * Consumes `<prefix>.deliveries`. Each batch is one partition's records; its offsets are committed
 * once every message in it is finished, handed to the retry schedule, or queued in its endpoint's
 * FIFO lane (parked in PostgreSQL at its offset, so a blocked lane holds no offsets). Messages
 * already finished, queued or owned by the retry schedule (seen again after a restart) are
 * recognised by id and skipped.
 */
@Injectable()
export class DispatcherConsumer extends TopicWorker<DeliveryRecord> {
  constructor(
    @Inject(KAFKA) kafka: Kafka,
    @Inject(TOPICS) topics: TopicNames,
    @Inject(HOOKBASE_CONFIG) config: HookbaseConfig,
    private readonly messages: MessageRepository,
    private readonly delivery: DeliveryService,
    private readonly lanes: FifoLaneRepository,
    private readonly laneRunner: FifoLaneRunner,
  ) {
    super(kafka, config, {
      role: 'dispatcher',
      topic: topics.deliveries,
      schema: deliveryRecordSchema,
      partitionsConsumedConcurrently: 12,
    });
  }

  protected async handle(records: DeliveryRecord[], sources: ConsumedRecord[]): Promise<void> {
    const states = await this.messages.deliveryStates(records.map((d) => d.messageId));
    const seen = new Set<string>();
    const candidates: { record: DeliveryRecord; offset: string; attemptsMade: number }[] = [];
    records.forEach((record, index) => {
      const state = states.get(record.messageId);
      // Only messages still on the deliveries path: new ones, or ones interrupted mid-attempt.
      const onThisPath =
        state !== undefined &&
        !state.inLane &&
        (state.status === 'pending' || state.status === 'in_flight') &&
        state.nextAttemptAt === null;
      if (!onThisPath || seen.has(record.messageId)) return;
      seen.add(record.messageId);
      candidates.push({ record, offset: sources[index].offset, attemptsMade: state.attempts });
    });
    // New messages of FIFO endpoints join their lanes, in offset order, before anything else.
    const queued = await this.lanes.park(
      candidates.map(({ record, offset }) => ({ messageId: record.messageId, seq: offset })),
    );
    const inLanes = new Set(queued.map((q) => q.messageId));
    this.laneRunner.wake(new Set(queued.map((q) => q.endpointId)));
    const pending: PendingDelivery[] = [];
    for (const { record, attemptsMade } of candidates) {
      if (inLanes.has(record.messageId)) continue;
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
        attemptsMade,
      });
    }
    await this.delivery.deliver(pending);
  }
}
