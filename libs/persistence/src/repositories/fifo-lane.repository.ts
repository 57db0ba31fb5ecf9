import { Inject, Injectable, Optional } from '@nestjs/common';
import { METRICS, NO_METRICS, TransitionMetrics } from '@hookbase/runtime';
import { DataSource } from 'typeorm';
import {
  DeliveryRoute,
  LaneLease,
  MessageStatus,
  PayloadRead,
  Plan,
  TransitionReport,
} from '@hookbase/domain';
import { settleTransitions, transitionCase } from './delivery-transitions';
import type { EndpointVersion } from './endpoint.repository';
import { DeliveryState, SendableRow, sendableOf } from './message.repository';
import { LOCK_IN_ID_ORDER, LOCKED_FIRST } from './lock-order';
import { NamedStatement } from './named-statement';

const PARKED_IN_LANE = transitionCase(['parked_in_lane'], 'm');
const ATTEMPT_STARTED = transitionCase(['attempt_started'], 'm');
const HANDED_BACK = transitionCase(['handed_back'], 'm');

/**
 * The dispatcher's intake (`$1`: message ids, `$2`: their offsets, `$3`: events whose payloads to
 * read, `$4`: the most bytes of them); see `intake`.
 */
const INTAKE = new NamedStatement<{
  id: string;
  endpoint_id: string;
  status: MessageStatus;
  route: DeliveryRoute;
  attempts: number;
  max_attempts: number;
  lane: boolean;
  parked: boolean;
  endpoint_version: string | null;
  consecutive_failures: number;
  failing_since: Date | null;
  last_success_at: Date | null;
  event_id: string;
  payload: Record<string, unknown> | null;
  payload_bytes: number | null;
}>(
  'hookbase-dispatcher-intake',
  `WITH asked AS MATERIALIZED (
         SELECT m.id, m.endpoint_id, m.event_id, m.status, m.route, m.attempts, m.max_attempts, u.seq,
                (m.replay_of IS NULL AND coalesce(e.fifo_enabled AND e.deleted_at IS NULL, false))
                  AS lane,
                e.config_version AS endpoint_version, e.consecutive_failures, e.failing_since,
                e.last_success_at
           FROM unnest($1::text[], $2::bigint[]) AS u(id, seq)
           JOIN messages m ON m.id = u.id
           LEFT JOIN endpoints e ON e.id = m.endpoint_id),
       parked AS (
         UPDATE messages m SET ${PARKED_IN_LANE.set}, fifo_seq = a.seq, updated_at = now()
           FROM asked a
          WHERE m.id = a.id AND a.lane AND a.route = 'stream' AND ${PARKED_IN_LANE.allowed}
         RETURNING m.id),
       wanted AS (
         SELECT DISTINCT ON (a.event_id) a.id, a.seq, a.event_id, ev.payload,
                octet_length(ev.payload::text) AS bytes
           FROM asked a JOIN events ev ON ev.id = a.event_id
          WHERE a.event_id = ANY($3::text[]) AND a.route = 'stream' AND NOT a.lane
                AND ev.payload_purged_at IS NULL
          ORDER BY a.event_id, a.seq),
       payloads AS (
         SELECT w.id, w.payload, w.bytes
           FROM (SELECT wanted.*, sum(bytes) OVER (ORDER BY seq, event_id) AS upto FROM wanted) w
          WHERE w.upto <= $4::bigint)
       SELECT a.id, a.endpoint_id, a.status, a.route, a.attempts, a.max_attempts, a.lane,
              p.id IS NOT NULL AS parked, a.endpoint_version, a.consecutive_failures,
              a.failing_since, a.last_success_at, a.event_id, pl.payload, pl.bytes AS payload_bytes
         FROM asked a LEFT JOIN parked p ON p.id = a.id LEFT JOIN payloads pl ON pl.id = a.id`,
);

/** The messages that joined their lanes (`transitioned`, and `queued` with their endpoints). */
export interface LaneParking extends TransitionReport {
  queued: { messageId: string; endpointId: string }[];
}

/** The first messages of a lane's queue as read; `whole`: there are no others. */
export interface LaneWindow {
  messages: QueuedMessage[];
  whole: boolean;
}

/** A message in a lane's queue, with what is needed to send it. */
export interface QueuedMessage {
  messageId: string;
  eventId: string;
  organizationId: string;
  endpointId: string;
  eventType: string;
  /**
   * The event's payload; absent for a head whose payload alone was larger than its window's
   * bound (`FifoLaneRepository.queues`): it is read when the head is about to be sent.
   */
  payload?: Record<string, unknown>;
  acceptedAt: Date;
  status: MessageStatus;
  attempts: number;
  nextAttemptAt: Date | null;
  /** The organization's plan, for its retention. */
  plan: Plan;
  /** The event's stored trace context (W3C `traceparent`), or null. */
  traceParent?: string | null;
}

/** What `fifo-state` shows of a lane, read in one go. */
export interface LaneSnapshot {
  queueDepth: number;
  head: {
    messageId: string;
    eventType: string;
    status: MessageStatus;
    attempts: number;
    maxAttempts: number;
    nextAttemptAt: Date | null;
    lastResponseStatus: number | null;
    lastError: string | null;
    queuedAt: Date;
  } | null;
  lease: LaneLease | null;
}

interface QueuedRow extends SendableRow {
  status: MessageStatus;
  next_attempt_at: Date | null;
  plan: Plan;
}

/**
 * FIFO lanes in PostgreSQL (ADR 0009): each queued message keeps its place (`fifo_seq`); a lane's
 * lease in `fifo_lanes` makes one worker at a time its runner.
 */
@Injectable()
export class FifoLaneRepository {
  constructor(
    private readonly dataSource: DataSource,
    @Optional() @Inject(METRICS) private readonly metrics: TransitionMetrics = NO_METRICS,
  ) {}

  /**
   * The dispatcher's intake of records read from the deliveries topic, in one statement: each
   * message's state as read (`states`; a message not found is absent), and `parked_in_lane` for
   * the new ones of FIFO endpoints, each queued in its lane at `seq` (its offset on the deliveries
   * partition). Only originals still `pending` on the stream whose endpoint has FIFO on are queued;
   * the others are left for normal delivery (and are not reported: they were never asked to join a
   * lane). `parking` has the queued ones, and the originals of FIFO endpoints that were on the
   * stream when read but whose state no longer let them join (`skipped`). A message given twice
   * keeps its first `seq`. `endpoints` has the configuration version and health of the endpoints
   * of the messages found, as `EndpointRepository.forDelivery` would read them first. `payloads`
   * has the payloads of the events named in `payloadsOf` that a message of theirs still on the
   * stream, outside a lane, is to be sent with, each once with its size in bytes of JSON, read in
   * the same snapshot as the states (a purged payload is absent: its messages are no longer on the
   * stream); taken in their first messages' order while they come to at most `payloadBytes` in
   * all (the others are absent too, and are read again with `EventRepository.payloads`).
   */
  async intake(
    messages: readonly { messageId: string; seq: string }[],
    payloadsOf: readonly string[] = [],
    payloadBytes = Number.MAX_SAFE_INTEGER,
  ): Promise<{
    states: Map<string, DeliveryState>;
    parking: LaneParking;
    endpoints: EndpointVersion[];
    payloads: Map<string, PayloadRead<Record<string, unknown>>>;
  }> {
    const states = new Map<string, DeliveryState>();
    const payloads = new Map<string, PayloadRead<Record<string, unknown>>>();
    if (messages.length === 0) {
      const parking = { transitioned: [], skipped: [], queued: [] };
      return { states, parking, endpoints: [], payloads };
    }
    const first = [...new Map([...messages].reverse().map((m) => [m.messageId, m])).values()];
    const rows = await INTAKE.run(this.dataSource, [
      first.map((m) => m.messageId),
      first.map((m) => m.seq),
      [...new Set(payloadsOf)],
      payloadBytes,
    ]);
    const endpoints = new Map<string, EndpointVersion>();
    for (const row of rows) {
      if (row.payload !== null)
        payloads.set(row.event_id, { payload: row.payload, bytes: row.payload_bytes! });
      states.set(row.id, {
        status: row.status,
        route: row.route,
        attempts: row.attempts,
        maxAttempts: row.max_attempts,
      });
      if (row.endpoint_version !== null && !endpoints.has(row.endpoint_id)) {
        endpoints.set(row.endpoint_id, {
          id: row.endpoint_id,
          version: row.endpoint_version,
          consecutiveFailures: row.consecutive_failures,
          failingSince: row.failing_since,
          lastSuccessAt: row.last_success_at,
        });
      }
    }
    const queued = rows
      .filter((row) => row.parked)
      .map((row) => ({ messageId: row.id, endpointId: row.endpoint_id }));
    const asked = rows.filter((row) => row.lane && row.route === 'stream');
    const report =
      asked.length === 0
        ? { transitioned: [], skipped: [] }
        : await this.settle(
            asked.map((row) => row.id),
            'parked_in_lane',
            queued.map((q) => q.messageId),
          );
    return {
      states,
      parking: { ...report, queued },
      endpoints: [...endpoints.values()],
      payloads,
    };
  }

  /** Takes the lane's lease for `owner` unless another owner holds a lease still running. */
  async acquire(endpointId: string, owner: string, leaseMs: number): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query(
      `INSERT INTO fifo_lanes AS l (endpoint_id, owner, lease_until, renewed_at)
       VALUES ($1, $2, now() + make_interval(secs => $3::float8 / 1000), now())
       ON CONFLICT (endpoint_id) DO UPDATE
          SET owner = EXCLUDED.owner, lease_until = EXCLUDED.lease_until, renewed_at = now(),
              blocked_reason = NULL, blocked_until = NULL
        WHERE l.owner IS NULL OR l.owner = EXCLUDED.owner OR l.lease_until < now()
       RETURNING endpoint_id`,
      [endpointId, owner, leaseMs],
    );
    return rows.length === 1;
  }

  /**
   * `acquire` for many lanes in one statement: takes each lane's lease for `owner` unless another
   * owner holds a lease still running. Returns the lanes now held by `owner`.
   */
  async acquireMany(
    endpointIds: readonly string[],
    owner: string,
    leaseMs: number,
  ): Promise<Set<string>> {
    if (endpointIds.length === 0) return new Set();
    const rows: { endpoint_id: string }[] = await this.dataSource.query(
      `INSERT INTO fifo_lanes AS l (endpoint_id, owner, lease_until, renewed_at)
       SELECT DISTINCT u.id, $2, now() + make_interval(secs => $3::float8 / 1000), now()
         FROM unnest($1::text[]) AS u(id)
       ON CONFLICT (endpoint_id) DO UPDATE
          SET owner = EXCLUDED.owner, lease_until = EXCLUDED.lease_until, renewed_at = now(),
              blocked_reason = NULL, blocked_until = NULL
        WHERE l.owner IS NULL OR l.owner = EXCLUDED.owner OR l.lease_until < now()
       RETURNING endpoint_id`,
      [[...endpointIds], owner, leaseMs],
    );
    return new Set(rows.map((row) => row.endpoint_id));
  }

  /** Extends the leases `owner` holds; returns the lanes it still holds. */
  async renew(
    owner: string,
    endpointIds: readonly string[],
    leaseMs: number,
  ): Promise<Set<string>> {
    if (endpointIds.length === 0) return new Set();
    const [rows]: [{ endpoint_id: string }[], number] = await this.dataSource.query(
      `UPDATE fifo_lanes SET lease_until = now() + make_interval(secs => $3::float8 / 1000),
              renewed_at = now()
        WHERE owner = $1 AND endpoint_id = ANY($2)
       RETURNING endpoint_id`,
      [owner, endpointIds, leaseMs],
    );
    return new Set(rows.map((row) => row.endpoint_id));
  }

  /**
   * Gives the lane up if its queue is empty, in one statement, so a message queued meanwhile is
   * never left without a runner. False when messages are still queued.
   */
  async releaseIfEmpty(endpointId: string, owner: string): Promise<boolean> {
    const [rows]: [unknown[], number] = await this.dataSource.query(
      `UPDATE fifo_lanes SET owner = NULL, lease_until = NULL, blocked_reason = NULL,
              blocked_until = NULL
        WHERE endpoint_id = $1 AND owner = $2
          AND NOT EXISTS (SELECT 1 FROM messages WHERE endpoint_id = $1 AND route = 'lane')
       RETURNING endpoint_id`,
      [endpointId, owner],
    );
    return rows.length === 1;
  }

  /**
   * `releaseIfEmpty` for many lanes in one statement: each lane `owner` holds whose queue is empty
   * is given up (the check and the release in the same statement, row by row). Returns the lanes
   * released; the others still have queued messages (or are not `owner`'s).
   */
  async releaseManyIfEmpty(endpointIds: readonly string[], owner: string): Promise<Set<string>> {
    if (endpointIds.length === 0) return new Set();
    const [rows]: [{ endpoint_id: string }[], number] = await this.dataSource.query(
      `UPDATE fifo_lanes l SET owner = NULL, lease_until = NULL, blocked_reason = NULL,
              blocked_until = NULL
        WHERE l.endpoint_id = ANY($1) AND l.owner = $2
          AND NOT EXISTS (SELECT 1 FROM messages m
                           WHERE m.endpoint_id = l.endpoint_id AND m.route = 'lane')
       RETURNING l.endpoint_id`,
      [[...endpointIds], owner],
    );
    return new Set(rows.map((row) => row.endpoint_id));
  }

  /**
   * Gives up every lane `owner` holds but `kept` (an orderly stop): others may take them at once.
   * The kept lanes (a head still being sent) stay to their lease. Returns the lanes given up.
   */
  async releaseAllExcept(owner: string, kept: readonly string[]): Promise<string[]> {
    const [rows]: [{ endpoint_id: string }[], number] = await this.dataSource.query(
      `UPDATE fifo_lanes SET owner = NULL, lease_until = NULL
        WHERE owner = $1 AND NOT (endpoint_id = ANY($2))
       RETURNING endpoint_id`,
      [owner, [...kept]],
    );
    return rows.map((row) => row.endpoint_id);
  }

  async setBlocked(
    endpointId: string,
    owner: string,
    reason: 'circuit_open' | null,
    until: Date | null,
  ): Promise<void> {
    await this.dataSource.query(
      `UPDATE fifo_lanes SET blocked_reason = $3, blocked_until = $4
        WHERE endpoint_id = $1 AND owner = $2`,
      [endpointId, owner, reason, until],
    );
  }

  /** The first `limit` messages of the lane's queue, head first. */
  async queue(endpointId: string, limit: number): Promise<QueuedMessage[]> {
    const rows: QueuedRow[] = await this.dataSource.query(
      `SELECT m.id, m.event_id, m.organization_id, m.endpoint_id, m.event_type, m.status,
              m.attempts, m.next_attempt_at, e.payload, e.accepted_at, o.plan,
              e.trace_parent
         FROM messages m
         JOIN events e ON e.id = m.event_id
         JOIN organizations o ON o.id = m.organization_id
        WHERE m.endpoint_id = $1 AND m.route = 'lane'
        ORDER BY m.fifo_seq
        LIMIT $2`,
      [endpointId, limit],
    );
    return rows.map((row) => ({
      ...sendableOf(row),
      status: row.status,
      nextAttemptAt: row.next_attempt_at,
      plan: row.plan,
    }));
  }

  /**
   * `queue` for many lanes in one statement: the first messages of each lane's queue, head first,
   * at most `limit` of them, and only while their payloads come to at most `maxBytes` bytes of JSON
   * in all. The head always comes: without its payload when that alone is larger (it is read when
   * the head is about to be sent), and then alone. `whole` says the window is the lane's whole
   * queue. A lane with nothing queued is absent from the map.
   */
  async queues(
    endpointIds: readonly string[],
    limit: number,
    maxBytes = Number.MAX_SAFE_INTEGER,
  ): Promise<Map<string, LaneWindow>> {
    const queues = new Map<string, LaneWindow>();
    if (endpointIds.length === 0) return queues;
    const rows: (QueuedRow & { read: number })[] = await this.dataSource.query(
      `SELECT m.id, m.event_id, m.organization_id, m.endpoint_id, m.event_type, m.status,
              m.attempts, m.next_attempt_at,
              CASE WHEN m.bytes_through <= $3 THEN m.payload END AS payload,
              m.accepted_at, o.plan, m.trace_parent, m.read::int AS read
         FROM (SELECT DISTINCT id FROM unnest($1::text[]) AS u(id)) lane
         CROSS JOIN LATERAL (
           SELECT q.*, e.payload, e.accepted_at, e.trace_parent,
                  count(*) OVER () AS read,
                  row_number() OVER (ORDER BY q.fifo_seq) AS place,
                  sum(octet_length(e.payload::text)) OVER (
                    ORDER BY q.fifo_seq ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
                    AS bytes_through
             FROM (SELECT q.id, q.event_id, q.organization_id, q.endpoint_id, q.event_type,
                          q.status, q.attempts, q.next_attempt_at, q.fifo_seq
                     FROM messages q
                    WHERE q.endpoint_id = lane.id AND q.route = 'lane'
                    ORDER BY q.fifo_seq
                    LIMIT $2) q
             JOIN events e ON e.id = q.event_id) m
         JOIN organizations o ON o.id = m.organization_id
        WHERE m.place = 1 OR m.bytes_through <= $3
        ORDER BY m.endpoint_id, m.fifo_seq`,
      [[...endpointIds], limit, maxBytes],
    );
    /** How many messages of each lane's queue were read, before the cut by bytes. */
    const readOf = new Map<string, number>();
    for (const row of rows) {
      const message: QueuedMessage = {
        ...sendableOf(row),
        status: row.status,
        nextAttemptAt: row.next_attempt_at,
        plan: row.plan,
      };
      const window = queues.get(message.endpointId);
      if (window) window.messages.push(message);
      else {
        queues.set(message.endpointId, { messages: [message], whole: false });
        readOf.set(message.endpointId, row.read);
      }
    }
    // A window cut short by its bytes is not the whole queue, however short the queue.
    for (const [endpointId, window] of queues) {
      const read = readOf.get(endpointId)!;
      window.whole = read < limit && window.messages.length === read;
    }
    return queues;
  }

  /**
   * `attempt_started` for a lane's head: shows it as being delivered (for the message log). Sent
   * alongside the attempt, so it is a no-op if that attempt was recorded first (its count has
   * moved on: reported as skipped).
   */
  startHeadAttempt(messageId: string, attemptsBefore: number): Promise<TransitionReport> {
    return this.startHeadAttempts([{ messageId, attemptsBefore }]);
  }

  /**
   * `startHeadAttempt` for many lanes' heads in one statement (each with the attempts it had made
   * before this one): a head whose attempt was recorded first is left as it is (skipped).
   */
  async startHeadAttempts(
    heads: readonly { messageId: string; attemptsBefore: number }[],
  ): Promise<TransitionReport> {
    if (heads.length === 0) return { transitioned: [], skipped: [] };
    const [rows]: [{ id: string }[], number] = await this.dataSource.query(
      `WITH ${LOCK_IN_ID_ORDER('$1')}
       UPDATE messages m SET ${ATTEMPT_STARTED.set}, next_attempt_at = NULL, updated_at = now()
         FROM unnest($1::text[], $2::int[]) AS h(id, attempts)
        WHERE ${LOCKED_FIRST} AND m.id = h.id AND m.attempts = h.attempts AND m.route = 'lane'
          AND ${ATTEMPT_STARTED.allowed}
       RETURNING m.id`,
      [heads.map((h) => h.messageId), heads.map((h) => h.attemptsBefore)],
    );
    return this.settle(
      heads.map((h) => h.messageId),
      'attempt_started',
      rows.map((row) => row.id),
    );
  }

  /**
   * `handed_back`: FIFO turned off, every queued message goes back to normal delivery (the retry
   * schedule), due at once: a head waiting for its retry included, so that nothing waits behind
   * a schedule the lane no longer imposes (its attempts made still count).
   * Every state of the lane route leaves by `handed_back`, so nothing it finds there is skipped.
   */
  async handBack(endpointId: string): Promise<TransitionReport> {
    const [rows]: [{ id: string }[], number] = await this.dataSource.query(
      `UPDATE messages m
          SET fifo_seq = NULL, ${HANDED_BACK.set}, updated_at = now(), claim_until = NULL,
              next_attempt_at = now()
        WHERE m.endpoint_id = $1 AND m.route = 'lane' AND ${HANDED_BACK.allowed}
       RETURNING m.id`,
      [endpointId],
    );
    return { transitioned: rows.map((row) => row.id), skipped: [] };
  }

  /** Lanes with queued messages that no worker holds (never taken, given up, or lease passed). */
  async unowned(limit: number): Promise<string[]> {
    const rows: { endpoint_id: string }[] = await this.dataSource.query(
      `SELECT q.endpoint_id
         FROM (SELECT DISTINCT endpoint_id FROM messages WHERE route = 'lane') q
         LEFT JOIN fifo_lanes l ON l.endpoint_id = q.endpoint_id
        WHERE l.owner IS NULL OR l.lease_until < now()
        LIMIT $1`,
      [limit],
    );
    return rows.map((row) => row.endpoint_id);
  }

  /** The report of a write asked to move `messageIds` by `event` that moved `moved`. */
  private settle(
    messageIds: readonly string[],
    event: 'parked_in_lane' | 'attempt_started',
    moved: readonly string[],
  ): Promise<TransitionReport> {
    return settleTransitions(
      (sql, parameters) => this.dataSource.query(sql, parameters),
      messageIds.map((messageId) => ({ messageId, event })),
      moved,
      this.metrics,
    );
  }

  async snapshot(endpointId: string): Promise<LaneSnapshot> {
    const [[counted], heads, leases] = await Promise.all([
      this.dataSource.query(
        `SELECT count(*)::int AS n FROM messages WHERE endpoint_id = $1 AND route = 'lane'`,
        [endpointId],
      ) as Promise<{ n: number }[]>,
      this.dataSource.query(
        `SELECT id, event_type, status, attempts, max_attempts, next_attempt_at,
                last_response_status, last_error, created_at
           FROM messages
          WHERE endpoint_id = $1 AND route = 'lane'
          ORDER BY fifo_seq LIMIT 1`,
        [endpointId],
      ) as Promise<
        {
          id: string;
          event_type: string;
          status: MessageStatus;
          attempts: number;
          max_attempts: number;
          next_attempt_at: Date | null;
          last_response_status: number | null;
          last_error: string | null;
          created_at: Date;
        }[]
      >,
      this.dataSource.query(
        `SELECT owner, lease_until, renewed_at, blocked_reason, blocked_until
           FROM fifo_lanes WHERE endpoint_id = $1`,
        [endpointId],
      ) as Promise<
        {
          owner: string | null;
          lease_until: Date | null;
          renewed_at: Date | null;
          blocked_reason: 'circuit_open' | null;
          blocked_until: Date | null;
        }[]
      >,
    ]);
    const head = heads[0];
    const lease = leases[0];
    return {
      queueDepth: counted.n,
      head: head
        ? {
            messageId: head.id,
            eventType: head.event_type,
            status: head.status,
            attempts: head.attempts,
            maxAttempts: head.max_attempts,
            nextAttemptAt: head.next_attempt_at,
            lastResponseStatus: head.last_response_status,
            lastError: head.last_error,
            queuedAt: head.created_at,
          }
        : null,
      lease: lease
        ? {
            owner: lease.owner,
            leaseUntil: lease.lease_until,
            renewedAt: lease.renewed_at,
            blockedReason: lease.blocked_reason,
            blockedUntil: lease.blocked_until,
          }
        : null,
    };
  }
}
