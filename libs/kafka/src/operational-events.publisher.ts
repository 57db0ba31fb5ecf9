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

/**
 * What an operational event is about: an endpoint, and whether that endpoint is operational
 * (undefined when the caller does not know: looked up with the recipients).
 */
export interface OperationalSubject {
  id: string;
  organizationId: string;
  operational?: boolean;
}

/** One operational event of a kind: its subject and its data. */
export interface OperationalEvent {
  subject: OperationalSubject;
  data?: Record<string, unknown>;
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

  emit(
    type: OperationalEventType,
    subject: OperationalSubject,
    data: Record<string, unknown> = {},
    at = new Date(),
  ): Promise<void> {
    return this.emitAll(type, [{ subject, data }], at);
  }

  /** Events of one type about several endpoints: one read of recipients per organization. */
  async emitAll(
    type: OperationalEventType,
    events: readonly OperationalEvent[],
    at = new Date(),
  ): Promise<void> {
    const byOrganization = new Map<string, OperationalEvent[]>();
    for (const event of events) {
      if (event.subject.operational === true) continue;
      const list = byOrganization.get(event.subject.organizationId) ?? [];
      list.push(event);
      byOrganization.set(event.subject.organizationId, list);
    }
    for (const [organizationId, list] of byOrganization) {
      try {
        const operational = await this.endpoints.operationalEndpoints(organizationId);
        const recipients = operationalRecipients(
          operational.filter((endpoint) => !endpoint.deleted),
          type,
        );
        if (recipients.length === 0) continue;
        const operationalIds = new Set(operational.map((endpoint) => endpoint.id));
        const records = list
          .filter((event) => !operationalIds.has(event.subject.id))
          .map((event) => {
            const envelope: EventEnvelope = {
              id: newId('evt', at.getTime()),
              organizationId,
              eventType: type,
              payload: operationalPayload(type, event.subject.id, at, event.data),
              acceptedAt: at.toISOString(),
              endpointIds: recipients,
            };
            return {
              key: organizationId,
              value: JSON.stringify(envelope),
              headers: operationalRecordHeaders(),
            };
          });
        if (records.length > 0) await this.producer.send(this.topics.events, records);
      } catch (error) {
        this.logger.warn(
          `${list.length} operational event(s) ${type} of ${organizationId} not published: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }
  }
}
