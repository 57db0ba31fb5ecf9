import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  EventEnvelope,
  newId,
  operationalPayload,
  operationalRecipients,
  type OperationalEventType,
} from '@hookbase/domain';
import { EndpointRepository } from '@hookbase/persistence';
import { operationalRecordHeaders } from './ingest-origin';
import { KafkaProducer } from './kafka-producer';
import { TOPICS } from './kafka.tokens';
import { TopicNames } from './topics';

/** What an operational event is about: an endpoint, and whether that endpoint is operational. */
export interface OperationalSubject {
  id: string;
  organizationId: string;
  operational: boolean;
}

/**
 * Publishes operational events as ordinary events on the events topic, addressed by `endpointIds`
 * to the organization's operational endpoints subscribed to the type: from there the pipeline
 * (fan-out, dispatcher, retries, DLQ, the log) treats them like any other. Nothing about an
 * operational endpoint is reported (no loops), and a failure to publish is logged, never thrown:
 * customer delivery never waits on it nor changes because of it.
 */
@Injectable()
export class OperationalEventPublisher {
  private readonly logger = new Logger(OperationalEventPublisher.name);

  constructor(
    private readonly producer: KafkaProducer,
    @Inject(TOPICS) private readonly topics: TopicNames,
    private readonly endpoints: EndpointRepository,
  ) {}

  async emit(
    type: OperationalEventType,
    subject: OperationalSubject,
    data: Record<string, unknown> = {},
    at = new Date(),
  ): Promise<void> {
    if (subject.operational) return;
    try {
      const recipients = operationalRecipients(
        await this.endpoints.operationalEndpoints(subject.organizationId),
        type,
      );
      if (recipients.length === 0) return;
      const envelope: EventEnvelope = {
        id: newId('evt', at.getTime()),
        organizationId: subject.organizationId,
        eventType: type,
        payload: operationalPayload(type, subject.id, at, data),
        acceptedAt: at.toISOString(),
        endpointIds: recipients,
      };
      await this.producer.publish(this.topics.events, {
        key: subject.organizationId,
        value: JSON.stringify(envelope),
        headers: operationalRecordHeaders(),
      });
    } catch (error) {
      this.logger.warn(
        `operational event ${type} for ${subject.id} not published: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
}
