import { Inject, Injectable, Optional } from '@nestjs/common';
import { METRICS, NO_METRICS, TransitionMetrics } from '@hookbase/runtime';
import { DataSource, In } from 'typeorm';
import {
  AttemptMinute,
  DELIVERY_ORIGINS,
  DeliveryDecision,
  DeliveryEvent,
  DeliveryRoute,
  eventAfterAttempt,
  MessageStatus,
  newId,
  TransitionReport,
} from '@hookbase/domain';
import { AttemptEntity, MessageEntity } from '../entities';
import { Page, toPage } from './page';
import { takePollPlaces } from './poll-log.repository';
import { settleTransitions, stateLiterals, transitionCase } from './delivery-transitions';
import { LOCK_IN_ID_ORDER, LOCKED_FIRST } from './lock-order';
import { NamedStatement } from './named-statement';

const ATTEMPT_EVENTS = ['attempt_succeeded', 'retry_scheduled', 'dead_lettered'] as const;
/**
 * An attempt's transition, chosen by the message's state when the write applies: a lane may show
 * its head in flight while the attempt is being recorded, and the record must still apply.
 */
const ATTEMPT_BATCH_TO = transitionCase(ATTEMPT_EVENTS, 'm', 'u.event');
const ATTEMPT_ONE_TO = transitionCase(ATTEMPT_EVENTS, 'm', '$10::text');
const ATTEMPT_STARTED = transitionCase(['attempt_started'], 'm');
const CLAIMED_FOR_RETRY = transitionCase(['claimed_for_retry'], 'm');
const HELD = transitionCase(['held'], 'm');
const ENDED = {
  cancelled: transitionCase(['cancelled'], 'm'),
  expired: transitionCase(['expired'], 'm'),
  skipped: transitionCase(['skipped'], 'm'),
};
const COPIED = stateLiterals(DELIVERY_ORIGINS.copied);
const COPIED_FOR_POLLING = stateLiterals(DELIVERY_ORIGINS.copied_for_polling);

/** `attempt_started` for a batch of messages (`$1`: their ids). */
const CLAIM_FOR_ATTEMPT = new NamedStatement<{ id: string }>(
  'hookbase-claim-for-attempt',
  `UPDATE messages m SET ${ATTEMPT_STARTED.set}, next_attempt_at = NULL,
              -- A retry keeps its claim's lease through the attempt: if the process dies before
              -- the attempt is recorded, the schedule claims the message again when it lapses.
              claim_until = CASE WHEN m.route = 'schedule' THEN m.claim_until END,
              updated_at = now()
        WHERE m.id = ANY($1) AND ${ATTEMPT_STARTED.allowed}
       RETURNING m.id`,
);

/**
 * `attempt_started` for stream messages whose attempts are under way (`$1`: ids, `$2`: the
 * attempts each had made before), locking in id order like the attempt records it may meet.
 */
const SHOW_STREAM_ATTEMPTS_STARTED = new NamedStatement<{ id: string }>(
  'hookbase-show-stream-attempts-started',
  `WITH ${LOCK_IN_ID_ORDER('$1')}
   UPDATE messages m SET ${ATTEMPT_STARTED.set}, updated_at = now()
     FROM unnest($1::text[], $2::int[]) AS a(id, attempts)
    WHERE ${LOCKED_FIRST} AND m.id = a.id AND m.attempts = a.attempts AND m.route = 'stream'
      AND ${ATTEMPT_STARTED.allowed}
   RETURNING m.id`,
);

/** Attempts and the transitions they cause, for a batch (columns as arrays, `$1`–`$11`). */
const RECORD_ATTEMPTS = new NamedStatement<{ id: string }>(
  'hookbase-record-attempts',
  `WITH ${LOCK_IN_ID_ORDER('$2')},
       recorded AS (
         INSERT INTO attempts (id, message_id, attempt_number, started_at, duration_ms, outcome,
                               response_status, response_excerpt, error)
         SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::timestamptz[], $5::int[],
                              $6::text[], $7::int[], $8::text[], $9::text[]))
       UPDATE messages AS m
          SET status = ${ATTEMPT_BATCH_TO.status}, route = ${ATTEMPT_BATCH_TO.route},
              attempts = u.attempts, next_attempt_at = u.next_attempt_at, claim_until = NULL,
              last_response_status = u.response_status, last_error = u.error, updated_at = now(),
              finished_at = CASE WHEN ${ATTEMPT_BATCH_TO.route} = 'final' THEN now() END
         FROM unnest($2::text[], $10::text[], $3::int[], $11::timestamptz[], $7::int[], $9::text[])
              AS u(id, event, attempts, next_attempt_at, response_status, error)
        WHERE ${LOCKED_FIRST} AND m.id = u.id AND ${ATTEMPT_BATCH_TO.allowed}
       RETURNING m.id`,
);

/** One attempt and its transition (`$1`–`$11`). */
const RECORD_ONE_ATTEMPT = new NamedStatement<{ id: string }>(
  'hookbase-record-attempt',
  `WITH recorded AS (
               INSERT INTO attempts (id, message_id, attempt_number, started_at, duration_ms,
                                     outcome, response_status, response_excerpt, error)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9))
             UPDATE messages m
                SET status = ${ATTEMPT_ONE_TO.status}, route = ${ATTEMPT_ONE_TO.route},
                    attempts = $3, next_attempt_at = $11, claim_until = NULL,
                    last_response_status = $7, last_error = $9, updated_at = now(),
                    finished_at = CASE WHEN ${ATTEMPT_ONE_TO.route} = 'final' THEN now() END
              WHERE m.id = $2 AND ${ATTEMPT_ONE_TO.allowed}
             RETURNING m.id`,
);

export interface DeliveryState {
  status: MessageStatus;
  /** What owns it: only a message on the `stream` route is the deliveries path's to send. */
  route: DeliveryRoute;
  attempts: number;
  maxAttempts: number;
}

/** A message claimed from the retry schedule, with what is needed to send it. */
export interface ClaimedMessage {
  messageId: string;
  /** The original message's id: what receivers see as webhook-id, copies included. */
  webhookId: string;
  eventId: string;
  organizationId: string;
  endpointId: string;
  eventType: string;
  /**
   * The event's payload; absent when the claim's payloads came to its bound without it: it is
   * read when the attempt is about to start.
   */
  payload?: Record<string, unknown>;
  acceptedAt: Date;
  attempts: number;
  /** The event's stored trace context (W3C `traceparent`), or null. */
  traceParent?: string | null;
}

/** The columns of a message to send, as the retry claim and a lane's queue read them. */
export interface SendableRow {
  id: string;
  event_id: string;
  organization_id: string;
  endpoint_id: string;
  event_type: string;
  /** Null when the read left the payload to be read when the attempt is about to start. */
  payload: Record<string, unknown> | null;
  accepted_at: Date;
  attempts: number;
  trace_parent: string | null;
}

/** What a claim and a lane's queue tell of each message to send. */
export function sendableOf(row: SendableRow) {
  return {
    messageId: row.id,
    eventId: row.event_id,
    organizationId: row.organization_id,
    endpointId: row.endpoint_id,
    eventType: row.event_type,
    payload: row.payload ?? undefined,
    acceptedAt: row.accepted_at,
    attempts: row.attempts,
    traceParent: row.trace_parent,
  };
}

/** The retry claim: the messages claimed (`transitioned`), with what is needed to send each. */
export interface RetryClaims extends TransitionReport {
  messages: ClaimedMessage[];
}

/** What one attempt changed: the attempt row and the message's new state. */
export interface AttemptRecord {
  messageId: string;
  attemptNumber: number;
  startedAt: Date;
  durationMs: number;
  outcome: 'succeeded' | 'retry' | 'failed';
  responseStatus: number | null;
  responseExcerpt: string | null;
  error: string | null;
  /** The attempt's decision: the message's transition is `eventAfterAttempt` of it. */
  messageStatus: DeliveryDecision['status'];
  nextAttemptAt: Date | null;
}

/** Each of `messageIds` asked to move by `event`. */
const asking = (messageIds: readonly string[], event: DeliveryEvent) =>
  messageIds.map((messageId) => ({ messageId, event }));

export interface MessageFilter {
  endpointId?: string;
  /** Messages to endpoints of this application (its id). */
  applicationId?: string;
  status?: MessageStatus;
  eventType?: string;
  /** Created at or after this time (ISO 8601). */
  createdAfter?: string;
  /** Created before this time (ISO 8601). */
  createdBefore?: string;
}

@Injectable()
export class MessageRepository {
  constructor(
    private readonly dataSource: DataSource,
    @Optional() @Inject(METRICS) private readonly metrics: TransitionMetrics = NO_METRICS,
  ) {}

  /**
   * `attempt_started`: the messages' attempts are under way (`in_flight` on their route). A
   * retry keeps its claim's lease until the attempt is recorded (ADR 19); a message off the
   * stream has none, since Kafka delivers it again if the process dies first.
   */
  async claimForAttempt(messageIds: readonly string[]): Promise<TransitionReport> {
    if (messageIds.length === 0) return { transitioned: [], skipped: [] };
    const rows = await CLAIM_FOR_ATTEMPT.run(this.dataSource, [messageIds]);
    return this.settle(asking(messageIds, 'attempt_started'), rows);
  }

  /**
   * `attempt_started` for messages on the stream whose attempts have been under way a while, each
   * with the attempts it had made before this one: shown `in_flight`. Their attempts do not wait
   * for this (they may be recorded from `pending`), so a message whose attempt was recorded first,
   * or that moved on, is left as it is (skipped).
   */
  async showStreamAttemptsStarted(
    attempts: readonly { messageId: string; attemptsBefore: number }[],
  ): Promise<TransitionReport> {
    if (attempts.length === 0) return { transitioned: [], skipped: [] };
    const rows = await SHOW_STREAM_ATTEMPTS_STARTED.run(this.dataSource, [
      attempts.map((a) => a.messageId),
      attempts.map((a) => a.attemptsBefore),
    ]);
    return this.settle(
      asking(
        attempts.map((a) => a.messageId),
        'attempt_started',
      ),
      rows,
    );
  }

  /**
   * Records attempts and the state they leave their messages in (`attempt_succeeded`,
   * `retry_scheduled` or `dead_lettered`): one statement, so one round trip and atomic (a FIFO
   * lane waits for it before sending its next message).
   */
  async recordAttempts(records: readonly AttemptRecord[]): Promise<TransitionReport> {
    if (records.length === 0) return { transitioned: [], skipped: [] };
    const asked = records.map((r) => ({
      messageId: r.messageId,
      event: eventAfterAttempt(r.messageStatus),
    }));
    if (records.length === 1) return this.settle(asked, await this.recordOne(records[0]));
    const rows = await RECORD_ATTEMPTS.run(this.dataSource, [
      records.map(() => newId('att')),
      records.map((r) => r.messageId),
      records.map((r) => r.attemptNumber),
      records.map((r) => r.startedAt),
      records.map((r) => Math.round(r.durationMs)),
      records.map((r) => r.outcome),
      records.map((r) => r.responseStatus),
      records.map((r) => r.responseExcerpt),
      records.map((r) => r.error),
      asked.map((a) => a.event),
      records.map((r) => r.nextAttemptAt),
    ]);
    return this.settle(asked, rows);
  }

  /**
   * One attempt, as a named prepared statement: planned once per connection instead of at every
   * call (planning the general form costs more than running it). A FIFO lane waits for this write
   * before sending its next message, so it is on the lane's critical path.
   */
  private async recordOne(r: AttemptRecord): Promise<{ id: string }[]> {
    return RECORD_ONE_ATTEMPT.run(this.dataSource, [
      newId('att'),
      r.messageId,
      r.attemptNumber,
      r.startedAt,
      Math.round(r.durationMs),
      r.outcome,
      r.responseStatus,
      r.responseExcerpt,
      r.error,
      eventAfterAttempt(r.messageStatus),
      r.nextAttemptAt,
    ]);
  }

  /**
   * `claimed_for_retry`: claims due messages of the retry schedule (and claims whose lease ran
   * out: their worker died) for one attempt each, under a lease (`claim_until`). Only messages on
   * the `schedule` route are claimed (a FIFO lane sends its own). SKIP LOCKED lets several
   * dispatchers claim side by side; `idx_messages_schedule_due` serves the scan in due order.
   * Each event's payload is read once for the claim's messages of that event, while the payloads
   * come to at most `payloadBytes` bytes of JSON; the messages of the other events come without
   * theirs (read when their attempts are about to start).
   */
  async claimForRetry(
    limit: number,
    leaseMs: number,
    payloadBytes = Number.MAX_SAFE_INTEGER,
  ): Promise<RetryClaims> {
    // Every row `due` locked, with the claim's columns when the claim moved it (NULL when not).
    const rows: ({ due_id: string; webhook_id: string } & (SendableRow | { id: null }))[] =
      await this.dataSource.query(
        `WITH due AS MATERIALIZED (
         SELECT id FROM messages
          WHERE route = 'schedule' AND COALESCE(claim_until, next_attempt_at) <= now()
          ORDER BY COALESCE(claim_until, next_attempt_at)
          LIMIT $1
          FOR UPDATE SKIP LOCKED),
       claimed AS (
         UPDATE messages m
            SET ${CLAIMED_FOR_RETRY.set}, next_attempt_at = NULL,
                claim_until = now() + make_interval(secs => $2::float8 / 1000), updated_at = now()
           FROM due, events e
          WHERE m.id = due.id AND e.id = m.event_id AND ${CLAIMED_FOR_RETRY.allowed}
         RETURNING m.id, COALESCE(m.replay_of, m.id) AS webhook_id, m.event_id, m.organization_id,
                   m.endpoint_id, m.event_type, m.attempts, e.trace_parent,
                   -- A copy's age (for maxAgeMs) counts from when it was made.
                   CASE WHEN m.replay_of IS NULL THEN e.accepted_at ELSE m.created_at END AS accepted_at),
       -- One message of each event carries its payload, while they fit the bytes given.
       payloads AS (
         SELECT f.id, e.payload,
                sum(octet_length(e.payload::text)) OVER (ORDER BY f.id) AS bytes_through
           FROM (SELECT DISTINCT ON (event_id) id, event_id FROM claimed ORDER BY event_id, id) f
           JOIN events e ON e.id = f.event_id)
       SELECT due.id AS due_id, c.*,
              CASE WHEN p.bytes_through <= $3 THEN p.payload END AS payload
         FROM due LEFT JOIN claimed c ON c.id = due.id LEFT JOIN payloads p ON p.id = c.id`,
        [limit, leaseMs, payloadBytes],
      );
    const claimed = rows.filter((row): row is typeof row & SendableRow => row.id !== null);
    // The payload came with one message of its event: the others share it.
    const payloads = new Map<string, Record<string, unknown>>();
    for (const row of claimed) if (row.payload !== null) payloads.set(row.event_id, row.payload);
    const messages: ClaimedMessage[] = claimed.map((row) => ({
      ...sendableOf(row),
      payload: payloads.get(row.event_id),
      webhookId: row.webhook_id,
    }));
    const report = await this.settle(
      asking(
        rows.map((row) => row.due_id),
        'claimed_for_retry',
      ),
      messages.map((m) => ({ id: m.messageId })),
    );
    return { ...report, messages };
  }

  /**
   * Copies messages for a replay or DLQ retry: new rows, due at once on the retry schedule (outside
   * any FIFO lane), with a fresh attempt budget from the endpoint's current policy. Copies of
   * copies point at the original, whose id stays the webhook-id. A copy for a polling endpoint is
   * appended to the end of its poll log instead (`pending`, never on the retry schedule).
   */
  async createCopies(
    organizationId: string,
    originalIds: readonly string[],
  ): Promise<MessageEntity[]> {
    if (originalIds.length === 0) return [];
    return this.dataSource.transaction(async (tx) => {
      const originals: { id: string; endpoint_id: string; polling: boolean }[] = await tx.query(
        `SELECT m.id, m.endpoint_id, e.kind = 'polling' AS polling
           FROM unnest($2::text[]) WITH ORDINALITY AS c(original_id, position)
           JOIN messages m ON m.id = c.original_id AND m.organization_id = $1
           JOIN endpoints e ON e.id = m.endpoint_id AND e.deleted_at IS NULL
          ORDER BY c.position`,
        [organizationId, originalIds],
      );
      const polled = originals.filter((o) => o.polling);
      const places = await takePollPlaces(
        tx,
        polled.map((o) => o.endpoint_id),
      );
      const placeOf = new Map(polled.map((o, i) => [o.id, places[i].toString()]));
      const copies = originals.map((o) => ({
        original: o.id,
        copy: newId('msg'),
        place: placeOf.get(o.id) ?? null,
      }));
      await tx.query(
        `INSERT INTO messages (id, organization_id, event_id, endpoint_id, event_type, status, route,
                               attempts, max_attempts, next_attempt_at, created_at, updated_at,
                               replay_of, poll_seq)
         SELECT c.copy_id, m.organization_id, m.event_id, m.endpoint_id, m.event_type,
                CASE WHEN c.poll_seq IS NULL THEN ${COPIED.status} ELSE ${COPIED_FOR_POLLING.status} END,
                CASE WHEN c.poll_seq IS NULL THEN ${COPIED.route} ELSE ${COPIED_FOR_POLLING.route} END, 0,
                jsonb_array_length(e.retry -> 'delaysMs'),
                CASE WHEN c.poll_seq IS NULL THEN now() END, now(), now(),
                COALESCE(m.replay_of, m.id), c.poll_seq
           FROM unnest($2::text[], $3::text[], $4::bigint[]) AS c(original_id, copy_id, poll_seq)
           JOIN messages m ON m.id = c.original_id AND m.organization_id = $1
           JOIN endpoints e ON e.id = m.endpoint_id`,
        [
          organizationId,
          copies.map((c) => c.original),
          copies.map((c) => c.copy),
          copies.map((c) => c.place),
        ],
      );
      return tx
        .getRepository(MessageEntity)
        .find({ where: { id: In(copies.map((c) => c.copy)) }, order: { id: 'ASC' } });
    });
  }

  /**
   * Failed messages (originals and copies) of endpoints (one, or an application's), in id order
   * (created at or after `since`, after `after`), for replay-failed.
   */
  async failedOfEndpoints(
    endpointIds: readonly string[],
    since: Date | undefined,
    limit: number,
    after?: string,
    range: { until?: Date; eventTypes?: readonly string[] } = {},
  ): Promise<string[]> {
    // Subscriptions: exact names, and wildcard prefixes (`order.*` is `order.` and more).
    const types = range.eventTypes;
    const everyType = !types || types.includes('*');
    const exact = everyType ? null : types.filter((t) => !t.endsWith('*'));
    const prefixes = everyType
      ? null
      : types
          .filter((t) => t.endsWith('*'))
          .map((t) => `${t.slice(0, -1).replace(/[\\%_]/g, (c) => `\\${c}`)}_%`);
    const rows: { id: string }[] = await this.dataSource.query(
      `SELECT id FROM messages
        WHERE ${ofEndpoints('endpoint_id', endpointIds)} AND status = 'failed'
          AND ($2::timestamptz IS NULL OR created_at >= $2)
          AND ($4::text IS NULL OR id > $4)
          AND ($5::timestamptz IS NULL OR created_at < $5)
          AND ($6::text[] IS NULL OR event_type = ANY($6) OR event_type LIKE ANY($7::text[]))
        ORDER BY id LIMIT $3`,
      [
        endpointsParam(endpointIds),
        since ?? null,
        limit,
        after ?? null,
        range.until ?? null,
        exact,
        prefixes,
      ],
    );
    return rows.map((row) => row.id);
  }

  /** `held`: puts messages (back) on the retry schedule until `until` without using an attempt. */
  async hold(messageIds: readonly string[], until: Date): Promise<TransitionReport> {
    if (messageIds.length === 0) return { transitioned: [], skipped: [] };
    const [rows]: [{ id: string }[], number] = await this.dataSource.query(
      `UPDATE messages m SET ${HELD.set}, next_attempt_at = $2, claim_until = NULL,
              updated_at = now()
        WHERE m.id = ANY($1) AND ${HELD.allowed}
       RETURNING m.id`,
      [messageIds, until],
    );
    return this.settle(asking(messageIds, 'held'), rows);
  }

  /** `held`, each message until its own time (see `hold`). */
  async holdEach(holds: readonly { messageId: string; until: Date }[]): Promise<TransitionReport> {
    if (holds.length === 0) return { transitioned: [], skipped: [] };
    const [rows]: [{ id: string }[], number] = await this.dataSource.query(
      `UPDATE messages m SET ${HELD.set}, next_attempt_at = h.until, claim_until = NULL,
              updated_at = now()
         FROM unnest($1::text[], $2::timestamptz[]) AS h(id, until)
        WHERE m.id = h.id AND ${HELD.allowed}
       RETURNING m.id`,
      [holds.map((h) => h.messageId), holds.map((h) => h.until)],
    );
    return this.settle(
      asking(
        holds.map((h) => h.messageId),
        'held',
      ),
      rows,
    );
  }

  /** `cancelled`: their endpoint is gone (the caller has dead-lettered them). */
  cancel(messageIds: readonly string[]): Promise<TransitionReport> {
    return this.end(messageIds, 'cancelled');
  }

  /** `expired`: too old to deliver (the caller has dead-lettered them). */
  expire(messageIds: readonly string[]): Promise<TransitionReport> {
    return this.end(messageIds, 'expired');
  }

  /** `skipped`: new messages that met an open circuit (the caller has dead-lettered them). */
  skip(messageIds: readonly string[]): Promise<TransitionReport> {
    return this.end(messageIds, 'skipped');
  }

  private async end(
    messageIds: readonly string[],
    event: 'cancelled' | 'expired' | 'skipped',
  ): Promise<TransitionReport> {
    if (messageIds.length === 0) return { transitioned: [], skipped: [] };
    const to = ENDED[event];
    const [rows]: [{ id: string }[], number] = await this.dataSource.query(
      `UPDATE messages m SET ${to.set}, next_attempt_at = NULL, claim_until = NULL,
              updated_at = now(), ${to.finishedAt('m.finished_at')}
        WHERE m.id = ANY($1) AND ${to.allowed}
       RETURNING m.id`,
      [messageIds],
    );
    return this.settle(asking(messageIds, event), rows);
  }

  /** The report of a write asked to move `asked` that moved the rows `moved`. */
  private settle(
    asked: readonly { messageId: string; event: DeliveryEvent }[],
    moved: readonly { id: string }[],
  ): Promise<TransitionReport> {
    return settleTransitions(
      (sql, parameters) => this.dataSource.query(sql, parameters),
      asked,
      moved.map((row) => row.id),
      this.metrics,
    );
  }

  /** The message log, newest first. */
  async list(
    organizationId: string,
    filter: MessageFilter,
    options: { limit: number; cursor?: string },
  ): Promise<Page<MessageEntity>> {
    const query = this.dataSource
      .getRepository(MessageEntity)
      .createQueryBuilder('m')
      .where('m.organization_id = :organizationId', { organizationId })
      .orderBy('m.id', 'DESC')
      .take(options.limit + 1);
    if (filter.endpointId) query.andWhere('m.endpoint_id = :endpointId', filter);
    // An endpoint never changes application, so its messages are that application's.
    if (filter.applicationId) {
      query.andWhere(
        'm.endpoint_id IN (SELECT e.id FROM endpoints e WHERE e.application_id = :applicationId)',
        { applicationId: filter.applicationId },
      );
    }
    if (filter.status) query.andWhere('m.status = :status', filter);
    if (filter.eventType) query.andWhere('m.event_type = :eventType', filter);
    // As UTC instants: PostgreSQL refuses offsets beyond ±15:59 that ISO 8601 allows.
    if (filter.createdAfter) {
      query.andWhere('m.created_at >= :createdAfter', { createdAfter: utc(filter.createdAfter) });
    }
    if (filter.createdBefore) {
      query.andWhere('m.created_at < :createdBefore', { createdBefore: utc(filter.createdBefore) });
    }
    if (options.cursor) query.andWhere('m.id < :cursor', { cursor: options.cursor });
    return toPage(await query.getMany(), options.limit);
  }

  find(organizationId: string, id: string): Promise<MessageEntity | null> {
    return this.dataSource.getRepository(MessageEntity).findOneBy({ organizationId, id });
  }

  attemptsOf(messageId: string): Promise<AttemptEntity[]> {
    return this.dataSource
      .getRepository(AttemptEntity)
      .find({ where: { messageId }, order: { attemptNumber: 'ASC', startedAt: 'ASC' } });
  }

  /**
   * The attempts per minute since `from` of endpoints (one, or an application's): how many
   * succeeded, how many did not, and the median and longest attempt. Their messages are found by
   * idx_messages_endpoint.
   */
  async attemptMinutes(endpointIds: readonly string[], from: Date): Promise<AttemptMinute[]> {
    const rows: {
      minute: Date;
      succeeded: string;
      failed: string;
      p50_ms: number | null;
      max_ms: number | null;
    }[] = await this.dataSource.query(
      `SELECT date_trunc('minute', a.started_at) AS minute,
              count(*) FILTER (WHERE a.outcome = 'succeeded') AS succeeded,
              count(*) FILTER (WHERE a.outcome <> 'succeeded') AS failed,
              percentile_disc(0.5) WITHIN GROUP (ORDER BY a.duration_ms) AS p50_ms,
              max(a.duration_ms) AS max_ms
         FROM attempts a JOIN messages m ON m.id = a.message_id
        WHERE ${ofEndpoints('m.endpoint_id', endpointIds)} AND a.started_at >= $2
        GROUP BY 1`,
      [endpointsParam(endpointIds), from],
    );
    return rows.map((row) => ({
      minute: new Date(row.minute),
      succeeded: Number(row.succeeded),
      failed: Number(row.failed),
      p50Ms: row.p50_ms === null ? null : Number(row.p50_ms),
      maxMs: row.max_ms === null ? null : Number(row.max_ms),
    }));
  }

  /** The latest attempts of endpoints (one, or an application's), newest first, each with its message. */
  async recentAttempts(endpointIds: readonly string[], limit: number): Promise<AttemptEntity[]> {
    const rows: {
      id: string;
      message_id: string;
      attempt_number: number;
      started_at: Date;
      duration_ms: number;
      outcome: AttemptEntity['outcome'];
      response_status: number | null;
      response_excerpt: string | null;
      error: string | null;
    }[] = await this.dataSource.query(
      `SELECT a.id, a.message_id, a.attempt_number, a.started_at, a.duration_ms, a.outcome,
              a.response_status, a.response_excerpt, a.error
         FROM attempts a JOIN messages m ON m.id = a.message_id
        WHERE ${ofEndpoints('m.endpoint_id', endpointIds)}
        ORDER BY a.started_at DESC, a.id DESC
        LIMIT $2`,
      [endpointsParam(endpointIds), limit],
    );
    return rows.map((row) =>
      Object.assign(new AttemptEntity(), {
        id: row.id,
        messageId: row.message_id,
        attemptNumber: row.attempt_number,
        startedAt: new Date(row.started_at),
        durationMs: row.duration_ms,
        outcome: row.outcome,
        responseStatus: row.response_status,
        responseExcerpt: row.response_excerpt,
        error: row.error,
      }),
    );
  }
}

/**
 * `$1` naming one endpoint or several: one is compared with `=`, so PostgreSQL 15 keeps walking
 * idx_messages_endpoint in id order and stops at the limit (with `= ANY` it would not).
 */
function ofEndpoints(column: string, endpointIds: readonly string[]): string {
  return endpointIds.length === 1 ? `${column} = $1::text` : `${column} = ANY($1::text[])`;
}

function endpointsParam(endpointIds: readonly string[]): string | string[] {
  return endpointIds.length === 1 ? endpointIds[0] : [...endpointIds];
}

/** An ISO 8601 time with any offset, as the same instant in UTC. */
function utc(time: string): string {
  return new Date(time).toISOString();
}
