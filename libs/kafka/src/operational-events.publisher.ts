import { Injectable, Logger } from '@nestjs/common';
import {
  EventEnvelope,
  GroupedWork,
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

/** An organization's operational endpoint, as the publisher reads it. */
type OperationalEndpoint = Awaited<ReturnType<EndpointRepository['operationalEndpoints']>>[number];

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

  /**
   * Reads of organizations' operational endpoints asked for together, outside a transaction, go
   * in one round: the events of one burst (a hanging receiver's attempts timing out together, each
   * telling `message.attempt.exhausted`) read their organization's operational endpoints once, not
   * once each, so they do not take the pool from the delivery path's statements.
   */
  private readonly reads = new GroupedWork<string, OperationalEndpoint[]>(
    async (organizationIds) => {
      const byOrganization = new Map<string, Promise<OperationalEndpoint[]>>();
      for (const id of new Set(organizationIds)) {
        byOrganization.set(id, this.endpoints.operationalEndpoints(id));
      }
      return Promise.all(organizationIds.map((id) => byOrganization.get(id)!));
    },
  );

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
        // In the caller's transaction, on its connection: a transaction that waited for a second
        // connection of the pool could wait forever once every connection is held by one such.
        const operational = manager
          ? await this.endpoints.operationalEndpoints(organizationId, manager)
          : (await this.reads.run([organizationId]))[0];
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
