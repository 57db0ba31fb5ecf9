import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import {
  BlockedEpisode,
  EndpointStatus,
  LaneLease,
  MessageStatus,
  SweptLane,
} from '@hookbase/domain';

/** A lane as the blocked-episode sweep sees it, with its endpoint and its open episode. */
export interface SweptLaneRow extends SweptLane {
  endpointId: string;
  organizationId: string;
  operational: boolean;
  head: (NonNullable<SweptLane['head']> & { eventType: string }) | null;
  episode: BlockedEpisode | null;
}

/** Runs a statement: the data source, or a transaction's manager. */
type Runner = Pick<EntityManager, 'query'>;

/**
 * FIFO lanes' blocked episodes in `fifo_lanes` (episode_head, episode_since, episode_reported_at).
 * Every write names the head the episode is about and changes the row only in the state the
 * sweep saw, so of several sweeps (dispatcher replicas) one ends, starts or reports an episode.
 */
@Injectable()
export class FifoEpisodeRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Lanes with queued messages or an open episode, after `afterEndpointId`, in endpoint order:
   * each with its endpoint, its head and its lease.
   */
  async lanes(afterEndpointId: string, limit: number): Promise<SweptLaneRow[]> {
    const rows: {
      endpoint_id: string;
      organization_id: string;
      status: EndpointStatus;
      operational: boolean;
      deleted: boolean;
      head_id: string | null;
      head_status: MessageStatus | null;
      head_attempts: number | null;
      head_next_attempt_at: Date | null;
      head_event_type: string | null;
      owner: string | null;
      lease_until: Date | null;
      renewed_at: Date | null;
      blocked_reason: 'circuit_open' | null;
      blocked_until: Date | null;
      episode_head: string | null;
      episode_since: Date | null;
      episode_reported_at: Date | null;
    }[] = await this.dataSource.query(
      `WITH lanes AS (
         SELECT endpoint_id FROM (SELECT DISTINCT endpoint_id FROM messages WHERE route = 'lane') q
          WHERE endpoint_id > $1
         UNION
         SELECT endpoint_id FROM fifo_lanes WHERE episode_head IS NOT NULL AND endpoint_id > $1)
       SELECT la.endpoint_id, e.organization_id, e.status, e.operational,
              e.deleted_at IS NOT NULL AS deleted,
              h.id AS head_id, h.status AS head_status, h.attempts AS head_attempts,
              h.next_attempt_at AS head_next_attempt_at, h.event_type AS head_event_type,
              l.owner, l.lease_until, l.renewed_at, l.blocked_reason, l.blocked_until,
              l.episode_head, l.episode_since, l.episode_reported_at
         FROM lanes la
         JOIN endpoints e ON e.id = la.endpoint_id
         LEFT JOIN fifo_lanes l ON l.endpoint_id = la.endpoint_id
         LEFT JOIN LATERAL (
           SELECT id, status, attempts, next_attempt_at, event_type FROM messages
            WHERE endpoint_id = la.endpoint_id AND route = 'lane'
            ORDER BY fifo_seq LIMIT 1) h ON true
        ORDER BY la.endpoint_id
        LIMIT $2`,
      [afterEndpointId, limit],
    );
    return rows.map((row) => {
      const lease: LaneLease | null =
        row.owner === null && row.lease_until === null && row.blocked_reason === null
          ? null
          : {
              owner: row.owner,
              leaseUntil: row.lease_until,
              renewedAt: row.renewed_at,
              blockedReason: row.blocked_reason,
              blockedUntil: row.blocked_until,
            };
      return {
        endpointId: row.endpoint_id,
        organizationId: row.organization_id,
        operational: row.operational,
        endpointStatus: row.status,
        deleted: row.deleted,
        head:
          row.head_id === null
            ? null
            : {
                messageId: row.head_id,
                status: row.head_status!,
                attempts: row.head_attempts!,
                nextAttemptAt: row.head_next_attempt_at,
                eventType: row.head_event_type!,
              },
        lease,
        episode:
          row.episode_head === null || row.episode_since === null
            ? null
            : {
                headId: row.episode_head,
                since: row.episode_since,
                reportedAt: row.episode_reported_at,
              },
      };
    });
  }

  /** Opens an episode for `headId` unless one is open; true when this call opened it. */
  async start(
    endpointId: string,
    headId: string,
    runner: Runner = this.dataSource,
  ): Promise<boolean> {
    const rows: unknown[] = await runner.query(
      `INSERT INTO fifo_lanes AS l (endpoint_id, episode_head, episode_since)
       VALUES ($1, $2, now())
       ON CONFLICT (endpoint_id) DO UPDATE
          SET episode_head = EXCLUDED.episode_head, episode_since = EXCLUDED.episode_since,
              episode_reported_at = NULL
        WHERE l.episode_head IS NULL
       RETURNING endpoint_id`,
      [endpointId, headId],
    );
    return rows.length === 1;
  }

  /**
   * Marks the episode of `headId` reported if it began at least `thresholdMs` ago (the store's
   * clock) and was not reported yet;
   * returns when it began, or null when another sweep reported (or ended) it first.
   */
  async report(
    endpointId: string,
    headId: string,
    thresholdMs: number,
    runner: Runner = this.dataSource,
  ): Promise<Date | null> {
    const [rows]: [{ episode_since: Date }[], number] = await runner.query(
      `UPDATE fifo_lanes SET episode_reported_at = now()
        WHERE endpoint_id = $1 AND episode_head = $2 AND episode_reported_at IS NULL
          AND episode_since <= now() - make_interval(secs => $3::float8 / 1000)
       RETURNING episode_since`,
      [endpointId, headId, thresholdMs],
    );
    return rows[0]?.episode_since ?? null;
  }

  /**
   * Closes the episode of `headId`; returns it as it was (whether it had been reported), or null
   * when another sweep closed it first.
   */
  async end(
    endpointId: string,
    headId: string,
    runner: Runner = this.dataSource,
  ): Promise<BlockedEpisode | null> {
    const [rows]: [{ episode_since: Date; episode_reported_at: Date | null }[], number] =
      await runner.query(
        `UPDATE fifo_lanes l
            SET episode_head = NULL, episode_since = NULL, episode_reported_at = NULL
           FROM (SELECT endpoint_id, episode_since, episode_reported_at FROM fifo_lanes
                  WHERE endpoint_id = $1 AND episode_head = $2 FOR UPDATE) old
          WHERE l.endpoint_id = old.endpoint_id AND l.episode_head = $2
         RETURNING old.episode_since, old.episode_reported_at`,
        [endpointId, headId],
      );
    const row = rows[0];
    return row ? { headId, since: row.episode_since, reportedAt: row.episode_reported_at } : null;
  }
}
