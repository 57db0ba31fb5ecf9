import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { DELIVERY_ORIGINS, EventEnvelope, PlannedMessage } from '@hookbase/domain';
import { EventEntity, MessageEntity } from '../entities';
import { takePollPlaces } from './poll-log.repository';
import { stateLiterals } from './delivery-transitions';

const RECORDED = stateLiterals(DELIVERY_ORIGINS.recorded);
const RECORDED_FOR_POLLING = stateLiterals(DELIVERY_ORIGINS.recorded_for_polling);

export interface RecordedMessage {
  messageId: string;
  eventId: string;
  endpointId: string;
  /** In a polling endpoint's log: consumers fetch it, nothing is sent. */
  polled: boolean;
}

/**
 * Writes accepted events and the messages the fan-out decided for them. Recording is idempotent:
 * an event seen again (a fan-out restarted before committing its offset) keeps the recipients and
 * message ids it got the first time, so downstream deduplication by message id holds.
 */
@Injectable()
export class EventRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Records the events and, for each event recorded now for the first time, the messages planned
   * for it; an event recorded before keeps its messages (read back), and its planned ones are
   * dropped. Answers each event's messages.
   */
  async recordEvents(
    envelopes: readonly EventEnvelope[],
    planned: readonly PlannedMessage[],
    traceParents: ReadonlyMap<string, string | null> = new Map(),
  ): Promise<Map<string, RecordedMessage[]>> {
    if (envelopes.length === 0) return new Map();
    return this.dataSource.transaction(async (tx) => {
      const fresh = await this.insertNewEvents(tx, envelopes, traceParents);
      const eventIds = [...new Set(envelopes.map((envelope) => envelope.id))];
      const byEvent = new Map<string, RecordedMessage[]>(eventIds.map((id) => [id, []]));
      // A fresh event's messages are the ones just made for it: no message can have existed.
      const freshIds = new Set(fresh.map((envelope) => envelope.id));
      const created = await this.insertMessages(
        tx,
        planned.filter((message) => freshIds.has(message.eventId)),
      );
      for (const message of created) byEvent.get(message.eventId)!.push(message);
      // An event recorded before (a repeated publish or a re-read record) has its messages read back.
      const earlier = eventIds.filter((id) => !freshIds.has(id));
      if (earlier.length > 0) {
        const rows: { id: string; event_id: string; endpoint_id: string; polled: boolean }[] =
          await tx.query(
            `SELECT id, event_id, endpoint_id, poll_seq IS NOT NULL AS polled FROM messages
            WHERE event_id = ANY($1) AND replay_of IS NULL`,
            [earlier],
          );
        for (const row of rows) {
          byEvent.get(row.event_id)!.push({
            messageId: row.id,
            eventId: row.event_id,
            endpointId: row.endpoint_id,
            polled: row.polled,
          });
        }
      }
      for (const messages of byEvent.values())
        messages.sort((a, b) =>
          a.messageId < b.messageId ? -1 : a.messageId > b.messageId ? 1 : 0,
        );
      return byEvent;
    });
  }

  private async insertNewEvents(
    tx: EntityManager,
    envelopes: readonly EventEnvelope[],
    traceParents: ReadonlyMap<string, string | null>,
  ): Promise<EventEnvelope[]> {
    const unique = [...new Map(envelopes.map((envelope) => [envelope.id, envelope])).values()];
    const now = new Date();
    const inserted: { id: string }[] = await tx.query(
      `INSERT INTO events (id, organization_id, event_type, payload, idempotency_key, accepted_at, created_at,
                           trace_parent, application_id)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[], $5::text[], $6::timestamptz[],
                            $7::timestamptz[], $8::text[], $9::text[])
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
        unique.map((e) => traceParents.get(e.id) ?? null),
        unique.map((e) => e.applicationId ?? null),
      ],
    );
    const insertedIds = new Set(inserted.map((row) => row.id));
    return unique.filter((envelope) => insertedIds.has(envelope.id));
  }

  /** Stores the messages of events recorded in this transaction; returns them. */
  private async insertMessages(
    tx: EntityManager,
    messages: readonly PlannedMessage[],
  ): Promise<RecordedMessage[]> {
    if (messages.length === 0) return [];
    // Places in polling endpoints' logs, in event (acceptance) order, taken in this transaction.
    const polled = messages.filter((m) => m.polled);
    const places = await takePollPlaces(
      tx,
      polled.map((m) => m.endpointId),
    );
    const placeOf = new Map(polled.map((m, i) => [m.messageId, places[i].toString()]));
    await tx.query(
      `INSERT INTO messages (id, organization_id, event_id, endpoint_id, event_type, status, route,
                             attempts, max_attempts, created_at, updated_at, poll_seq)
       SELECT m.id, m.organization_id, m.event_id, m.endpoint_id, m.event_type,
              CASE WHEN m.poll_seq IS NULL THEN ${RECORDED.status} ELSE ${RECORDED_FOR_POLLING.status} END,
              CASE WHEN m.poll_seq IS NULL THEN ${RECORDED.route} ELSE ${RECORDED_FOR_POLLING.route} END,
              0, m.max_attempts, now(), now(), m.poll_seq
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[],
                     $7::bigint[])
              AS m(id, organization_id, event_id, endpoint_id, event_type, max_attempts, poll_seq)
       ON CONFLICT (event_id, endpoint_id) WHERE replay_of IS NULL DO NOTHING`,
      [
        messages.map((m) => m.messageId),
        messages.map((m) => m.organizationId),
        messages.map((m) => m.eventId),
        messages.map((m) => m.endpointId),
        messages.map((m) => m.eventType),
        messages.map((m) => m.maxAttempts),
        messages.map((m) => placeOf.get(m.messageId) ?? null),
      ],
    );
    return messages.map((m) => ({
      messageId: m.messageId,
      eventId: m.eventId,
      endpointId: m.endpointId,
      polled: m.polled,
    }));
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
