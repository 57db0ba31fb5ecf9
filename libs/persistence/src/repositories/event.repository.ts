import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import {
  DEFAULT_RETRY_POLICY,
  EndpointStatus,
  EventEnvelope,
  matchRecipients,
  maxAttempts,
  newId,
  RecipientCandidate,
  RetryPolicy,
} from '@hookbase/domain';
import { EventEntity, MessageEntity } from '../entities';

export interface RecordedMessage {
  messageId: string;
  eventId: string;
  endpointId: string;
}

/**
 * Writes accepted events and their recipients. Recording is idempotent: an event seen again
 * (a fan-out restarted before committing its offset) keeps the recipients and message ids it got
 * the first time, so downstream deduplication by message id holds.
 */
@Injectable()
export class EventRepository {
  constructor(private readonly dataSource: DataSource) {}

  async recordEvents(envelopes: readonly EventEnvelope[]): Promise<Map<string, RecordedMessage[]>> {
    if (envelopes.length === 0) return new Map();
    return this.dataSource.transaction(async (tx) => {
      const fresh = await this.insertNewEvents(tx, envelopes);
      if (fresh.length > 0) await this.insertMessages(tx, fresh);
      const eventIds = [...new Set(envelopes.map((envelope) => envelope.id))];
      const rows: { id: string; event_id: string; endpoint_id: string }[] = await tx.query(
        `SELECT id, event_id, endpoint_id FROM messages
          WHERE event_id = ANY($1) AND replay_of IS NULL ORDER BY id`,
        [eventIds],
      );
      const byEvent = new Map<string, RecordedMessage[]>(eventIds.map((id) => [id, []]));
      for (const row of rows) {
        byEvent
          .get(row.event_id)!
          .push({ messageId: row.id, eventId: row.event_id, endpointId: row.endpoint_id });
      }
      return byEvent;
    });
  }

  private async insertNewEvents(
    tx: EntityManager,
    envelopes: readonly EventEnvelope[],
  ): Promise<EventEnvelope[]> {
    const unique = [...new Map(envelopes.map((envelope) => [envelope.id, envelope])).values()];
    const now = new Date();
    const inserted: { id: string }[] = await tx.query(
      `INSERT INTO events (id, organization_id, event_type, payload, idempotency_key, accepted_at, created_at)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[], $5::text[], $6::timestamptz[],
                            $7::timestamptz[])
       ON CONFLICT (id) DO NOTHING
       RETURNING id`,
      [
        unique.map((e) => e.id),
        unique.map((e) => e.organizationId),
        unique.map((e) => e.eventType),
        unique.map((e) => JSON.stringify(e.payload)),
        unique.map((e) => e.idempotencyKey ?? null),
        unique.map((e) => e.acceptedAt),
        unique.map(() => now),
      ],
    );
    const insertedIds = new Set(inserted.map((row) => row.id));
    return unique.filter((envelope) => insertedIds.has(envelope.id));
  }

  private async insertMessages(tx: EntityManager, events: readonly EventEnvelope[]) {
    const organizationIds = [...new Set(events.map((event) => event.organizationId))];
    const rows: {
      id: string;
      organization_id: string;
      status: EndpointStatus;
      event_types: string[];
      retry: RetryPolicy | null;
    }[] = await tx.query(
      `SELECT id, organization_id, status, event_types, retry FROM endpoints
        WHERE organization_id = ANY($1) AND deleted_at IS NULL AND status <> 'disabled'`,
      [organizationIds],
    );
    const byOrganization = new Map<string, (RecipientCandidate & { maxAttempts: number })[]>();
    for (const row of rows) {
      const candidates = byOrganization.get(row.organization_id) ?? [];
      candidates.push({
        id: row.id,
        status: row.status,
        eventTypes: row.event_types,
        deleted: false,
        maxAttempts: maxAttempts(row.retry ?? DEFAULT_RETRY_POLICY),
      });
      byOrganization.set(row.organization_id, candidates);
    }
    const messages = events.flatMap((event) =>
      matchRecipients(byOrganization.get(event.organizationId) ?? [], event).map((endpoint) => ({
        id: newId('msg'),
        event,
        endpoint,
      })),
    );
    if (messages.length === 0) return;
    await tx.query(
      `INSERT INTO messages (id, organization_id, event_id, endpoint_id, event_type, status, attempts,
                             max_attempts, created_at, updated_at)
       SELECT m.id, m.organization_id, m.event_id, m.endpoint_id, m.event_type, 'pending', 0,
              m.max_attempts, now(), now()
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[])
              AS m(id, organization_id, event_id, endpoint_id, event_type, max_attempts)
       ON CONFLICT (event_id, endpoint_id) WHERE replay_of IS NULL DO NOTHING`,
      [
        messages.map((m) => m.id),
        messages.map((m) => m.event.organizationId),
        messages.map((m) => m.event.id),
        messages.map((m) => m.endpoint.id),
        messages.map((m) => m.event.eventType),
        messages.map((m) => m.endpoint.maxAttempts),
      ],
    );
  }

  findEvent(organizationId: string, id: string): Promise<EventEntity | null> {
    return this.dataSource.getRepository(EventEntity).findOneBy({ organizationId, id });
  }

  /** An event's messages, copies made by replays included. */
  messagesOfEvent(eventId: string): Promise<MessageEntity[]> {
    return this.dataSource
      .getRepository(MessageEntity)
      .find({ where: { eventId }, order: { id: 'ASC' } });
  }
}
