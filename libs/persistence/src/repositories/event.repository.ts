import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DELIVERY_ORIGINS, EventEnvelope, isoTimestamp, PlannedMessage } from '@hookbase/domain';
import { EventEntity, MessageEntity } from '../entities';
import { Page, toPage } from './page';
import { takePollPlaces } from './poll-log.repository';
import { stateLiterals, transitionCase } from './delivery-transitions';
import { NamedStatement } from './named-statement';
import {
  NO_RECIPIENTS_VERSION,
  RECIPIENT_VERSIONS_SQL,
  type RecipientVersions,
} from './recipient-versions';

const RECORDED = stateLiterals(DELIVERY_ORIGINS.recorded);
const CANCELLED = transitionCase(['cancelled'], 'm');
const RECORDED_FOR_POLLING = stateLiterals(DELIVERY_ORIGINS.recorded_for_polling);

/**
 * Inserts the events ($1…$10, see eventColumns); one seen before is left as it is. The payloads
 * come as one JSON array ($4), taken apart by PostgreSQL, rather than as an array of JSON texts:
 * each text in an array literal had its every quote escaped, and the payload is most of an event.
 * `json_array_elements` gives each payload's text as it is in the array: its keys keep their order.
 */
function insertEventsSql(condition = 'true'): string {
  return `INSERT INTO events (id, organization_id, event_type, payload, idempotency_key, accepted_at,
                            created_at, trace_parent, channels, application_id)
       SELECT * FROM ROWS FROM (unnest($1::text[]), unnest($2::text[]), unnest($3::text[]),
                                json_array_elements($4::json), unnest($5::text[]),
                                unnest($6::timestamptz[]), unnest($7::timestamptz[]), unnest($8::text[]),
                                unnest($9::jsonb[]), unnest($10::text[]))
        WHERE ${condition}
       ON CONFLICT (id) DO NOTHING
       RETURNING id`;
}
const INSERT_EVENTS = insertEventsSql();

/** An event published on no channel. */
const NO_CHANNELS = '[]';

/**
 * The most text the payloads of one statement may make as a JSON array: a character may take three
 * bytes, and this keeps a statement's parameter well within PostgreSQL's limits on a value (1 GB
 * for json, 256 MB for jsonb). A batch over it is recorded in parts.
 */
const MAX_PAYLOADS_TEXT = 64 * 1024 * 1024;

/** The events' columns, in INSERT_EVENTS's parameter order, with their payloads as one array. */
function eventColumns(
  events: readonly EventEnvelope[],
  payloads: string,
  traceParents: ReadonlyMap<string, string | null>,
): unknown[] {
  // As text: node-postgres writes a Date element by element, a few hundred nanoseconds each.
  const now = isoTimestamp(Date.now());
  return [
    events.map((e) => e.id),
    events.map((e) => e.organizationId),
    events.map((e) => e.eventType),
    payloads,
    events.map((e) => e.idempotencyKey ?? null),
    events.map((e) => e.acceptedAt),
    events.map(() => now),
    events.map((e) => traceParents.get(e.id) ?? null),
    // A list per event: jsonb, since unnest cannot take a text[] per row.
    events.map((e) => (e.channels ? JSON.stringify(e.channels) : NO_CHANNELS)),
    events.map((e) => e.applicationId ?? null),
  ];
}

/**
 * Inserts messages from seven arrays starting at parameter number `first` (see messageColumns), each
 * recorded (or, with a place in a polling endpoint's log, recorded for polling); ends in a WHERE
 * clause that callers may extend with AND.
 */
function insertMessagesSql(first: number): string {
  const p = (k: number) => `$${first + k}`;
  return `INSERT INTO messages (id, organization_id, event_id, endpoint_id, event_type, status, route,
                             attempts, max_attempts, created_at, updated_at, poll_seq)
       SELECT m.id, m.organization_id, m.event_id, m.endpoint_id, m.event_type,
              CASE WHEN m.poll_seq IS NULL THEN ${RECORDED.status} ELSE ${RECORDED_FOR_POLLING.status} END,
              CASE WHEN m.poll_seq IS NULL THEN ${RECORDED.route} ELSE ${RECORDED_FOR_POLLING.route} END,
              0, m.max_attempts, now(), now(), m.poll_seq
         FROM unnest(${p(0)}::text[], ${p(1)}::text[], ${p(2)}::text[], ${p(3)}::text[], ${p(4)}::text[],
                     ${p(5)}::int[], ${p(6)}::bigint[])
              AS m(id, organization_id, event_id, endpoint_id, event_type, max_attempts, poll_seq)
        WHERE true`;
}

/** A message an event already has for its endpoint is kept (recording is idempotent). */
const ON_MESSAGE_CONFLICT =
  'ON CONFLICT (event_id, endpoint_id) WHERE replay_of IS NULL DO NOTHING';

/** Events and their messages in one statement (`$1`–`$17`); answers the events recorded now. */
const RECORD_EVENTS_AND_MESSAGES = new NamedStatement<{ id: string }>(
  'hookbase-record-events-and-messages',
  `WITH fresh AS (${INSERT_EVENTS}),
        stored AS (${insertMessagesSql(11)} AND m.event_id IN (SELECT id FROM fresh) ${ON_MESSAGE_CONFLICT})
   SELECT id FROM fresh`,
);

/**
 * The same, only if every organization of `$18` still has the version of its endpoints at the
 * same index of `$19` (NO_RECIPIENTS_VERSION for none): the messages were planned for the
 * endpoints at those versions. Otherwise nothing is recorded and the one row has a null id.
 */
const RECORD_EVENTS_AND_MESSAGES_IF_CURRENT = new NamedStatement<{ id: string | null }>(
  'hookbase-record-events-and-messages-if-current',
  `WITH planned_for AS (
          SELECT coalesce(bool_and(coalesce(now_.version, '${NO_RECIPIENTS_VERSION}') = v.version), true) AS current
            FROM unnest($18::text[], $19::text[]) AS v(organization_id, version)
            LEFT JOIN (${RECIPIENT_VERSIONS_SQL} WHERE organization_id = ANY($18) GROUP BY organization_id) now_
                   USING (organization_id)),
        fresh AS (${insertEventsSql('(SELECT current FROM planned_for)')}),
        stored AS (${insertMessagesSql(11)} AND m.event_id IN (SELECT id FROM fresh) ${ON_MESSAGE_CONFLICT})
   SELECT id FROM fresh
   UNION ALL SELECT NULL WHERE NOT (SELECT current FROM planned_for)`,
);

/** The messages' columns, in insertMessagesSql's parameter order (poll places where taken). */
function messageColumns(
  messages: readonly PlannedMessage[],
  placeOf: ReadonlyMap<string, string>,
): unknown[][] {
  return [
    messages.map((m) => m.messageId),
    messages.map((m) => m.organizationId),
    messages.map((m) => m.eventId),
    messages.map((m) => m.endpointId),
    messages.map((m) => m.eventType),
    messages.map((m) => m.maxAttempts),
    messages.map((m) => placeOf.get(m.messageId) ?? null),
  ];
}

/** Which events a list keeps. */
export interface EventFilter {
  /** Published for this application (its id). */
  applicationId?: string;
  eventType?: string;
  /** Accepted at or after this time (ISO 8601). */
  createdAfter?: string;
  /** Accepted before this time (ISO 8601). */
  createdBefore?: string;
}

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
  /** See MAX_PAYLOADS_TEXT; a test lowers it to see a batch recorded in parts. */
  payloadsTextLimit = MAX_PAYLOADS_TEXT;

  constructor(private readonly dataSource: DataSource) {}

  /**
   * Records the events and, for each event recorded now for the first time, the messages planned
   * for it; an event recorded before keeps its messages (read back), and its planned ones are
   * dropped. Answers each event's messages.
   */
  async recordEvents(
    envelopes: readonly EventEnvelope[],
    planned: readonly PlannedMessage[],
    traceParents?: ReadonlyMap<string, string | null>,
  ): Promise<Map<string, RecordedMessage[]>>;
  /**
   * Only if the organizations' endpoints are still at `plannedFor`, the versions the messages
   * were planned at; otherwise records nothing and answers undefined. With a polling endpoint
   * among the recipients it always answers undefined (the poll places take a transaction of their
   * own): the caller reads the versions and records without them.
   */
  async recordEvents(
    envelopes: readonly EventEnvelope[],
    planned: readonly PlannedMessage[],
    traceParents: ReadonlyMap<string, string | null>,
    plannedFor: RecipientVersions,
  ): Promise<Map<string, RecordedMessage[]> | undefined>;
  async recordEvents(
    envelopes: readonly EventEnvelope[],
    planned: readonly PlannedMessage[],
    traceParents: ReadonlyMap<string, string | null> = new Map(),
    plannedFor?: RecipientVersions,
  ): Promise<Map<string, RecordedMessage[]> | undefined> {
    if (envelopes.length === 0) return new Map();
    const unique = [...new Map(envelopes.map((envelope) => [envelope.id, envelope])).values()];
    return this.record(unique, planned, traceParents, plannedFor);
  }

  /**
   * `recordEvents` for events without repeats; a batch whose payloads would not fit one statement
   * goes in halves. Each half is recorded like a batch of its own, and a half recorded before the
   * other one was refused (its recipients' versions moved) is simply recorded before when the
   * caller records the batch again.
   */
  private async record(
    unique: readonly EventEnvelope[],
    planned: readonly PlannedMessage[],
    traceParents: ReadonlyMap<string, string | null>,
    plannedFor: RecipientVersions | undefined,
  ): Promise<Map<string, RecordedMessage[]> | undefined> {
    const payloads = JSON.stringify(unique.map((e) => e.payload));
    if (payloads.length > this.payloadsTextLimit && unique.length > 1) {
      const half = Math.ceil(unique.length / 2);
      const recorded = new Map<string, RecordedMessage[]>();
      for (const part of [unique.slice(0, half), unique.slice(half)]) {
        const ids = new Set(part.map((e) => e.id));
        const partPlanned = planned.filter((message) => ids.has(message.eventId));
        const messages = await this.record(part, partPlanned, traceParents, plannedFor);
        if (!messages) return undefined;
        for (const [eventId, list] of messages) recorded.set(eventId, list);
      }
      return recorded;
    }
    const events = eventColumns(unique, payloads, traceParents);
    const polled = planned.some((message) => message.polled);
    if (plannedFor) {
      if (polled) return undefined;
      const rows = await RECORD_EVENTS_AND_MESSAGES_IF_CURRENT.run(this.dataSource, [
        ...events,
        ...messageColumns(planned, new Map()),
        plannedFor.organizationIds,
        plannedFor.versions,
      ]);
      if (rows.some((row) => row.id === null)) return undefined;
      return this.messagesByEvent(unique, planned, new Set(rows.map((row) => row.id!)));
    }
    // Without a polling endpoint among the recipients, the events and their messages go in one
    // statement (one round trip, atomic like any statement): the fan-out's cost per batch, and so
    // per event when batches are small (many organizations publishing a little each).
    const fresh = polled
      ? await this.recordWithPollPlaces(events, planned)
      : await this.recordInOneStatement(events, planned);
    return this.messagesByEvent(unique, planned, fresh);
  }

  /** Events and messages in one statement; answers the ids of the events recorded now. */
  private async recordInOneStatement(
    events: unknown[],
    planned: readonly PlannedMessage[],
  ): Promise<Set<string>> {
    const rows = await RECORD_EVENTS_AND_MESSAGES.run(this.dataSource, [
      ...events,
      ...messageColumns(planned, new Map()),
    ]);
    return new Set(rows.map((row) => row.id));
  }

  /**
   * Events and messages in one transaction that first takes the polled messages' places in their
   * endpoints' logs (in event order); answers the ids of the events recorded now.
   */
  private async recordWithPollPlaces(
    events: unknown[],
    planned: readonly PlannedMessage[],
  ): Promise<Set<string>> {
    return this.dataSource.transaction(async (tx) => {
      const inserted: { id: string }[] = await tx.query(INSERT_EVENTS, events);
      const fresh = new Set(inserted.map((row) => row.id));
      // A fresh event's messages are the ones just made for it: no message can have existed.
      const messages = planned.filter((message) => fresh.has(message.eventId));
      if (messages.length === 0) return fresh;
      const polled = messages.filter((m) => m.polled);
      const places = await takePollPlaces(
        tx,
        polled.map((m) => m.endpointId),
      );
      const placeOf = new Map(polled.map((m, i) => [m.messageId, places[i].toString()]));
      await tx.query(
        `${insertMessagesSql(1)} ${ON_MESSAGE_CONFLICT}`,
        messageColumns(messages, placeOf),
      );
      return fresh;
    });
  }

  /**
   * Each event's messages: for an event recorded now, the ones planned for it; an event recorded
   * before (a repeated publish or a re-read record) has its messages read back. Sorted by id.
   */
  private async messagesByEvent(
    events: readonly EventEnvelope[],
    planned: readonly PlannedMessage[],
    fresh: ReadonlySet<string>,
  ): Promise<Map<string, RecordedMessage[]>> {
    const byEvent = new Map<string, RecordedMessage[]>(events.map((e) => [e.id, []]));
    for (const m of planned) {
      if (!fresh.has(m.eventId)) continue;
      const { messageId, eventId, endpointId, polled } = m;
      byEvent.get(eventId)?.push({ messageId, eventId, endpointId, polled });
    }
    const earlier = events.map((e) => e.id).filter((id) => !fresh.has(id));
    if (earlier.length > 0) {
      const rows: { id: string; event_id: string; endpoint_id: string; polled: boolean }[] =
        await this.dataSource.query(
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
      messages.sort((a, b) => (a.messageId < b.messageId ? -1 : a.messageId > b.messageId ? 1 : 0));
    return byEvent;
  }

  /**
   * Erases an event's payload where the database stores it (the event, its idempotency key), and
   * ends its messages still waiting (cancelled, dead-lettered as payload_purged): nothing can be
   * sent without it. The rows stay, with their ids, type, times, statuses and attempts. Answers how many
   * messages it ended, or null when the organization has no such event.
   */
  async purgePayload(
    organizationId: string,
    eventId: string,
  ): Promise<{ cancelled: number } | null> {
    return this.dataSource.transaction(async (tx) => {
      // An UPDATE … RETURNING answers [rows, count] through TypeORM's query().
      const [purged]: [{ id: string }[], number] = await tx.query(
        `UPDATE events SET payload = '{}'::json, payload_purged_at = COALESCE(payload_purged_at, now())
          WHERE id = $1 AND organization_id = $2 RETURNING id`,
        [eventId, organizationId],
      );
      if (purged.length === 0) return null;
      await tx.query(
        `UPDATE idempotency_keys SET payload = '{}'::jsonb WHERE organization_id = $1 AND event_id = $2`,
        [organizationId, eventId],
      );
      const rows: { n: number }[] = await tx.query(
        `WITH cancelled AS (
           UPDATE messages m
              SET ${CANCELLED.set}, ${CANCELLED.finishedAt('m.finished_at')}, updated_at = now()
            WHERE m.event_id = $1 AND m.organization_id = $2 AND ${CANCELLED.allowed}
           RETURNING m.id, m.organization_id, m.endpoint_id, m.event_id, m.event_type, m.attempts),
         recorded AS (
           INSERT INTO dlq_entries (id, organization_id, message_id, endpoint_id, event_id, event_type,
                                    reason, attempts, last_error, last_response_status, created_at)
           SELECT 'dlq_' || substr(c.id, 5), c.organization_id, c.id, c.endpoint_id, c.event_id,
                  c.event_type, 'payload_purged', c.attempts, 'payload purged before delivery',
                  NULL, now()
             FROM cancelled c
           ON CONFLICT (message_id) DO NOTHING)
         SELECT count(*)::int AS n FROM cancelled`,
        [eventId, organizationId],
      );
      return { cancelled: rows[0].n };
    });
  }

  /**
   * The payloads of these events, as published, by event id; an event whose payload was purged,
   * or that is no longer stored, is absent.
   */
  async payloads(eventIds: readonly string[]): Promise<Map<string, Record<string, unknown>>> {
    if (eventIds.length === 0) return new Map();
    const rows: { id: string; payload: Record<string, unknown> }[] = await this.dataSource.query(
      `SELECT id, payload FROM events WHERE id = ANY($1) AND payload_purged_at IS NULL`,
      [[...new Set(eventIds)]],
    );
    return new Map(rows.map((row) => [row.id, row.payload]));
  }

  /** Which of these messages belong to an event whose payload was purged. */
  async withPurgedPayload(messageIds: readonly string[]): Promise<Set<string>> {
    if (messageIds.length === 0) return new Set();
    const rows: { id: string }[] = await this.dataSource.query(
      `SELECT m.id FROM messages m JOIN events e ON e.id = m.event_id
        WHERE m.id = ANY($1) AND e.payload_purged_at IS NOT NULL`,
      [[...messageIds]],
    );
    return new Set(rows.map((row) => row.id));
  }

  /**
   * The organization's events, newest first (by id, which follows acceptance), without their
   * payloads: a page of them stays small whatever the events carry. By application it reads
   * idx_events_application.
   */
  async list(
    organizationId: string,
    filter: EventFilter,
    options: { limit: number; cursor?: string },
  ): Promise<Page<Omit<EventEntity, 'payload'>>> {
    const query = this.dataSource
      .getRepository(EventEntity)
      .createQueryBuilder('e')
      .select([
        'e.id',
        'e.organizationId',
        'e.eventType',
        'e.applicationId',
        'e.channels',
        'e.idempotencyKey',
        'e.acceptedAt',
        'e.createdAt',
        'e.payloadPurgedAt',
        'e.traceParent',
      ])
      .where('e.organization_id = :organizationId', { organizationId })
      .orderBy('e.id', 'DESC')
      .take(options.limit + 1);
    if (filter.applicationId)
      query.andWhere('e.application_id = :applicationId', { applicationId: filter.applicationId });
    if (filter.eventType) query.andWhere('e.event_type = :eventType', filter);
    // As UTC instants: PostgreSQL refuses offsets beyond ±15:59 that ISO 8601 allows.
    if (filter.createdAfter) {
      query.andWhere('e.accepted_at >= :createdAfter', {
        createdAfter: new Date(filter.createdAfter).toISOString(),
      });
    }
    if (filter.createdBefore) {
      query.andWhere('e.accepted_at < :createdBefore', {
        createdBefore: new Date(filter.createdBefore).toISOString(),
      });
    }
    if (options.cursor) query.andWhere('e.id < :cursor', { cursor: options.cursor });
    return toPage(await query.getMany(), options.limit);
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
