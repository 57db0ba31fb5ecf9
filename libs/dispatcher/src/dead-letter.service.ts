import { Inject, Injectable, Optional } from '@nestjs/common';
import { DlqReason, DlqRecord } from '@hookbase/domain';
import { KafkaProducer, OperationalEventPublisher, TOPICS, TopicNames } from '@hookbase/kafka';
import { MessageRepository } from '@hookbase/persistence';
import { DeliveryMetrics, METRICS, NO_METRICS } from '@hookbase/runtime';
import { PendingDelivery } from './pending-delivery';

/**
 * Ends messages without an attempt: each goes to the DLQ, then takes its final status, and its
 * organization hears of it (`message.attempt.exhausted` with the reason), whichever the caller.
 */
export interface DeadLetters {
  /** Sends the messages to the DLQ with `reason`, then ends them with `status`. */
  deadLetter(
    deliveries: readonly PendingDelivery[],
    reason: DlqReason,
    status: 'cancelled' | 'expired' | 'skipped',
  ): Promise<void>;
}

@Injectable()
export class DeadLetterService implements DeadLetters {
  constructor(
    @Inject(TOPICS) private readonly topics: TopicNames,
    private readonly producer: KafkaProducer,
    private readonly messages: MessageRepository,
    @Optional() @Inject(METRICS) private readonly metrics: DeliveryMetrics = NO_METRICS,
    @Optional() private readonly operational?: OperationalEventPublisher,
  ) {}

  async deadLetter(
    deliveries: readonly PendingDelivery[],
    reason: DlqReason,
    status: 'cancelled' | 'expired' | 'skipped',
  ): Promise<void> {
    if (deliveries.length === 0) return;
    // The DLQ records go out before the final status is written: a crash in between leaves the
    // messages to be settled again (at least once) rather than ended without their DLQ entries.
    await this.producer.send(
      this.topics.dlq,
      deliveries.map((d) => dlqMessage(d, reason, d.attemptsMade, null, null)),
    );
    this.metrics.deadLettered(reason, deliveries.length);
    const ids = deliveries.map((d) => d.messageId);
    if (status === 'cancelled') await this.messages.cancel(ids);
    else if (status === 'expired') await this.messages.expire(ids);
    else await this.messages.skip(ids);
    // Whether an endpoint is operational is looked up with the recipients (nothing is reported
    // about one); never thrown.
    await this.operational?.emitAll(
      'message.attempt.exhausted',
      deliveries.map((delivery) => ({
        subject: { id: delivery.endpointId, organizationId: delivery.organizationId },
        data: exhaustedData(delivery, reason, delivery.attemptsMade, null, null),
      })),
    );
  }
}

/** The data of `message.attempt.exhausted`: the message, why it was dead-lettered, its last try. */
export function exhaustedData(
  delivery: PendingDelivery,
  reason: DlqReason,
  attempts: number,
  lastError: string | null,
  lastResponseStatus: number | null,
): Record<string, unknown> {
  return {
    messageId: delivery.messageId,
    eventId: delivery.eventId,
    eventType: delivery.eventType,
    reason,
    attempts,
    lastError,
    lastResponseStatus,
  };
}

/** A message's DLQ record as it goes on the DLQ topic, keyed by its endpoint. */
export function dlqMessage(
  delivery: PendingDelivery,
  reason: DlqReason,
  attempts: number,
  lastError: string | null,
  lastResponseStatus: number | null,
): { key: string; value: string } {
  const record: DlqRecord = {
    messageId: delivery.messageId,
    organizationId: delivery.organizationId,
    endpointId: delivery.endpointId,
    eventId: delivery.eventId,
    eventType: delivery.eventType,
    reason,
    attempts,
    lastError,
    lastResponseStatus,
    deadLetteredAt: new Date().toISOString(),
  };
  return { key: delivery.endpointId, value: JSON.stringify(record) };
}
