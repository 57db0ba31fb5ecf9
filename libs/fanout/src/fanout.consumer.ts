import { Inject, Injectable } from '@nestjs/common';
import { Kafka } from 'kafkajs';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import { DeliveryRecord, EventEnvelope, eventEnvelopeSchema } from '@hookbase/domain';
import { KAFKA, KafkaProducer, TopicNames, TOPICS, TopicWorker } from '@hookbase/kafka';
import { EventRepository } from '@hookbase/persistence';

/**
 * Reads accepted events and writes one delivery per recipient endpoint, keyed by endpoint id,
 * in event order. Input offsets are committed only after the deliveries are acknowledged, and
 * recording is idempotent, so a crash at any point neither loses nor reorders.
 */
@Injectable()
export class FanoutConsumer extends TopicWorker<EventEnvelope> {
  constructor(
    @Inject(KAFKA) kafka: Kafka,
    @Inject(TOPICS) private readonly topics: TopicNames,
    @Inject(HOOKBASE_CONFIG) config: HookbaseConfig,
    private readonly events: EventRepository,
    private readonly producer: KafkaProducer,
  ) {
    super(kafka, config, {
      role: 'fanout',
      topic: topics.events,
      schema: eventEnvelopeSchema,
      partitionsConsumedConcurrently: 3,
    });
  }

  protected async handle(envelopes: EventEnvelope[]): Promise<void> {
    const recorded = await this.events.recordEvents(envelopes);
    const deliveries = envelopes.flatMap((envelope) =>
      (recorded.get(envelope.id) ?? []).map((message): DeliveryRecord => ({
        messageId: message.messageId,
        eventId: envelope.id,
        organizationId: envelope.organizationId,
        endpointId: message.endpointId,
        eventType: envelope.eventType,
        payload: envelope.payload,
        acceptedAt: envelope.acceptedAt,
      })),
    );
    // Duplicated envelopes (a repeated publish) produce their deliveries once.
    const seen = new Set<string>();
    const unique = deliveries.filter((d) => !seen.has(d.messageId) && seen.add(d.messageId));
    await this.producer.send(
      this.topics.deliveries,
      unique.map((delivery) => ({ key: delivery.endpointId, value: JSON.stringify(delivery) })),
    );
  }
}
