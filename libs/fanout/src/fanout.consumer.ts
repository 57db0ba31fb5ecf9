import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnApplicationShutdown,
} from '@nestjs/common';
import { Kafka } from 'kafkajs';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import { DeliveryRecord, EventEnvelope, eventEnvelopeSchema, parseRecord } from '@hookbase/domain';
import {
  BatchConsumer,
  ConsumedRecord,
  consumerGroup,
  KAFKA,
  KafkaProducer,
  TOPICS,
  TopicNames,
} from '@hookbase/kafka';
import { EventRepository } from '@hookbase/persistence';

/**
 * Reads accepted events and writes one delivery per recipient endpoint, keyed by endpoint id,
 * in event order. Input offsets are committed only after the deliveries are acknowledged, and
 * recording is idempotent, so a crash at any point neither loses nor reorders.
 */
@Injectable()
export class FanoutConsumer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(FanoutConsumer.name);
  private readonly consumer: BatchConsumer;
  invalidRecords = 0;

  constructor(
    @Inject(KAFKA) kafka: Kafka,
    @Inject(TOPICS) private readonly topics: TopicNames,
    @Inject(HOOKBASE_CONFIG) config: HookbaseConfig,
    private readonly events: EventRepository,
    private readonly producer: KafkaProducer,
  ) {
    this.consumer = new BatchConsumer(
      kafka,
      {
        groupId: consumerGroup(config.kafka.topicPrefix, 'fanout'),
        sessionTimeoutMs: config.kafka.sessionTimeoutMs,
        topic: topics.events,
        partitionsConsumedConcurrently: 3,
      },
      (records) => this.fanOut(records),
    );
  }

  onApplicationBootstrap(): void {
    this.consumer.startInBackground();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.consumer.stop();
  }

  private async fanOut(records: ConsumedRecord[]): Promise<void> {
    const envelopes: EventEnvelope[] = [];
    for (const record of records) {
      const parsed = parseRecord(eventEnvelopeSchema, record.value);
      if (parsed.ok) envelopes.push(parsed.record);
      else {
        this.invalidRecords++;
        this.logger.warn(`skipping invalid event at offset ${record.offset}: ${parsed.reason}`);
      }
    }
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
