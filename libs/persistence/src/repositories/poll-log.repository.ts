import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { assignPollSequences, pollPlacesNeeded } from '@hookbase/domain';
import { transitionCase } from './delivery-transitions';

// A poll log holds only `poll`/`pending` messages, which both events leave: a write that selects
// by route skips nothing it finds there.
const POLLED = transitionCase(['polled'], 'm');
const CANCELLED = transitionCase(['cancelled'], 'm');

/** One message as a poll returns it. */
export interface PolledMessage {
  /** This message row's id (what the message log shows). */
  messageId: string;
  /** The id a webhook would carry as `webhook-id`: the original's, for a replay copy. */
  webhookId: string;
  replayOf: string | null;
  eventId: string;
  eventType: string;
  payload: Record<string, unknown>;
  acceptedAt: Date;
  createdAt: Date;
  sequence: bigint;
}

/**
 * Takes places in polling endpoints' logs for messages listed in acceptance order, inside the
 * caller's transaction; returns each message's place. Each counter row stays locked until that
 * transaction ends, so a later writer to the same log waits and its places commit after ours:
 * places become visible in their order, which is what lets a cursor mean "seen all up to n".
 * Counters are raised in endpoint id order so two writers never wait on each other in a cycle.
 */
export async function takePollPlaces(
  tx: EntityManager,
  endpointIds: readonly string[],
): Promise<bigint[]> {
  if (endpointIds.length === 0) return [];
  const needed = pollPlacesNeeded(endpointIds);
  const rows: { endpoint_id: string; last_seq: string }[] = await tx.query(
    `INSERT INTO poll_counters (endpoint_id, last_seq)
     SELECT n.endpoint_id, n.count FROM unnest($1::text[], $2::bigint[]) WITH ORDINALITY
            AS n(endpoint_id, count, position)
      ORDER BY n.position
     ON CONFLICT (endpoint_id) DO UPDATE SET last_seq = poll_counters.last_seq + EXCLUDED.last_seq
     RETURNING endpoint_id, last_seq::text`,
    [needed.map(([id]) => id), needed.map(([, count]) => count)],
  );
  return assignPollSequences(
    endpointIds,
    new Map(rows.map((row) => [row.endpoint_id, BigInt(row.last_seq)])),
  );
}

/**
 * Polling endpoints' logs (ADR 0011): reading past a cursor, acknowledging what a consumer has
 * moved past, and closing a deleted endpoint's log.
 */
@Injectable()
export class PollLogRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * A poll's writes and reads: messages up to `after` were seen (a consumer only moves its cursor
   * past what it received), so those still `pending` are `polled` (`succeeded`); then up to `limit`
   * messages past `after`, in log order (none when `serve` is false: a paused or disabled
   * endpoint holds them). Expired and cancelled messages are not handed out.
   */
  async poll(
    endpointId: string,
    after: bigint,
    limit: number,
    serve: boolean,
  ): Promise<PolledMessage[]> {
    if (after > 0n) {
      await this.dataSource.query(
        `UPDATE messages m SET ${POLLED.set}, ${POLLED.finishedAt('m.finished_at')}, updated_at = now()
          WHERE m.endpoint_id = $1 AND m.route = 'poll' AND m.poll_seq <= $2 AND ${POLLED.allowed}`,
        [endpointId, after.toString()],
      );
    }
    if (!serve) return [];
    const rows: {
      id: string;
      webhook_id: string;
      replay_of: string | null;
      event_id: string;
      event_type: string;
      payload: Record<string, unknown>;
      accepted_at: Date;
      created_at: Date;
      poll_seq: string;
    }[] = await this.dataSource.query(
      `SELECT m.id, COALESCE(m.replay_of, m.id) AS webhook_id, m.replay_of, m.event_id,
              m.event_type, e.payload, e.accepted_at, m.created_at, m.poll_seq::text AS poll_seq
         FROM messages m JOIN events e ON e.id = m.event_id
        WHERE m.endpoint_id = $1 AND m.poll_seq > $2 AND m.status IN ('pending', 'succeeded')
        ORDER BY m.poll_seq
        LIMIT $3`,
      [endpointId, after.toString(), limit],
    );
    return rows.map((row) => ({
      messageId: row.id,
      webhookId: row.webhook_id,
      replayOf: row.replay_of,
      eventId: row.event_id,
      eventType: row.event_type,
      payload: row.payload,
      acceptedAt: row.accepted_at,
      createdAt: row.created_at,
      sequence: BigInt(row.poll_seq),
    }));
  }

  /**
   * A deleted polling endpoint's unfetched messages are dead-lettered (`endpoint_deleted`) and
   * `cancelled`, as the dispatcher does for push kinds.
   */
  async cancelUnpolled(endpointId: string): Promise<number> {
    const rows: { n: number }[] = await this.dataSource.query(
      `WITH cancelled AS (
         UPDATE messages m
            SET ${CANCELLED.set}, ${CANCELLED.finishedAt('m.finished_at')}, updated_at = now()
          WHERE m.endpoint_id = $1 AND m.route = 'poll' AND ${CANCELLED.allowed}
         RETURNING m.id, m.organization_id, m.endpoint_id, m.event_id, m.event_type, m.attempts),
       recorded AS (
         INSERT INTO dlq_entries (id, organization_id, message_id, endpoint_id, event_id, event_type,
                                  reason, attempts, last_error, last_response_status, created_at)
         -- The entry's id is derived from the message's (one entry per message, sorted alike).
         SELECT 'dlq_' || substr(c.id, 5), c.organization_id, c.id, c.endpoint_id, c.event_id,
                c.event_type, 'endpoint_deleted', c.attempts, 'endpoint deleted before it was polled',
                NULL, now()
           FROM cancelled c
         ON CONFLICT (message_id) DO NOTHING)
       SELECT count(*)::int AS n FROM cancelled`,
      [endpointId],
    );
    return rows[0].n;
  }
}
