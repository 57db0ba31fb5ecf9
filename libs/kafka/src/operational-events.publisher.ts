import { Injectable, Logger } from '@nestjs/common';
import {
  EventEnvelope,
  newId,
  operationalPayload,
  operationalRecipients,
  type OperationalEventType,
} from '@hookbase/domain';
import { EndpointRepository, OperationalOutboxRepository } from '@hookbase/persistence';
import type { EntityManager } from 'typeorm';
import { OperationalOutboxRelay } from './operational-outbox.relay';

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
 * (fan-out, dispatcher, retries, DLQ, the log) treats them like any other. They are written to
 * `operational_outbox` (in the caller's transaction when it gives one) and moved to Kafka by the
 * relay, so a Kafka outage loses none. Nothing about an operational endpoint is reported (no
 * loops). Without a transaction a failure to write is logged, never thrown: customer delivery
 * never waits on Kafka nor changes because of it.
 */
@Injectable()
export class OperationalEventPublisher {
  private readonly logger = new Logger(OperationalEventPublisher.name);

  constructor(
    private readonly endpoints: EndpointRepository,
    private readonly outbox: OperationalOutboxRepository,
    private readonly relay: OperationalOutboxRelay,
  ) {}

  emit(
    type: OperationalEventType,
    subject: OperationalSubject,
    data: Record<string, unknown> = {},
    at = new Date(),
  ): Promise<void> {
    return this.emitAll(type, [{ subject, data }], at);
  }

  /**
   * Events of one type about several endpoints: one read of recipients per organization. Given a
   * transaction (`manager`), they are written in it and a failure throws, so the change that
   * caused them and the events commit or fail together.
   */
  async emitAll(
    type: OperationalEventType,
    events: readonly OperationalEvent[],
    at = new Date(),
    manager?: Pick<EntityManager, 'query'>,
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
        const envelopes = list
          .filter((event) => !operationalIds.has(event.subject.id))
          .map((event): EventEnvelope => ({
            id: newId('evt', at.getTime()),
            organizationId,
            eventType: type,
            payload: operationalPayload(type, event.subject.id, at, event.data),
            acceptedAt: at.toISOString(),
            endpointIds: recipients,
          }));
        if (envelopes.length === 0) continue;
        await this.outbox.add(envelopes, manager);
        // Inside a transaction the relay finds them at its next tick, once committed.
        if (!manager) this.relay.nudge();
      } catch (error) {
        if (manager) throw error;
        this.logger.warn(
          `${list.length} operational event(s) ${type} of ${organizationId} not written: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }
  }
}
