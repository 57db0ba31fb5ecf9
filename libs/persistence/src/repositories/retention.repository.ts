import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { Plan } from '@hookbase/domain';
import { transitionCase } from './delivery-transitions';

// A poll log holds only `poll`/`pending` messages, which `expired` leaves: nothing is skipped.
const EXPIRED = transitionCase(['expired'], 'm');

export interface PruneCounts {
  /** Messages of polling endpoints never fetched within retention, now `expired`. */
  expired: number;
  messages: number;
  attempts: number;
  events: number;
  dlqEntries: number;
  idempotencyKeys: number;
  /** Endpoints' past routings (kept for events accepted before a change and fanned out after). */
  pastRoutings: number;
}

// One pruner at a time across every process sharing the database.
const RETENTION_LOCK = 7_246_802;

/**
 * Removes what each organization's plan no longer keeps. Only finished messages are pruned: one
 * still waiting stays until it finishes (its endpoint's maxAgeMs bounds that; a polling endpoint's
 * message not fetched within retention expires here). An event goes once
 * none of its messages remain, and its idempotency key with it ("reserved until pruned"). An
 * application with a shorter `retention_days` has its own log pruned by that.
 */
@Injectable()
export class RetentionRepository {
  constructor(private readonly dataSource: DataSource) {}

  async prune(days: Record<Plan, number>): Promise<PruneCounts | null> {
    return this.dataSource.transaction(async (tx) => {
      const [{ locked }]: { locked: boolean }[] = await tx.query(
        'SELECT pg_try_advisory_xact_lock($1) AS locked',
        [RETENTION_LOCK],
      );
      if (!locked) return null;
      const cutoffs = `
        cutoff AS (
          SELECT id, now() - make_interval(secs => 86400 * CASE plan
            WHEN 'free' THEN $1::float8 WHEN 'pro' THEN $2::float8 ELSE $3::float8 END) AS before
            FROM organizations),
        app_cutoff AS (
          SELECT id AS application_id, now() - make_interval(secs => 86400 * retention_days) AS before
            FROM applications WHERE retention_days IS NOT NULL)`;
      const params = [days.free, days.pro, days.business];
      const count = async (deletion: string): Promise<number> => {
        const rows: { n: number }[] = await tx.query(
          `WITH ${cutoffs}, gone AS (${deletion} RETURNING 1) SELECT count(*)::int AS n FROM gone`,
          params,
        );
        return rows[0].n;
      };
      // A polling endpoint's message nobody fetched within retention expires (finished, so it is
      // pruned a retention period later, like any finished message); polls skip it.
      const expired = await count(`
        UPDATE messages m SET ${EXPIRED.set}, ${EXPIRED.finishedAt('m.finished_at')}, updated_at = now()
          FROM cutoff c
         WHERE m.organization_id = c.id AND m.route = 'poll' AND ${EXPIRED.allowed}
           AND m.created_at < c.before`);
      const attempts = await count(`
        DELETE FROM attempts a USING messages m, cutoff c
         WHERE a.message_id = m.id AND m.organization_id = c.id AND m.finished_at < c.before`);
      const messages = await count(`
        DELETE FROM messages m USING cutoff c
         WHERE m.organization_id = c.id AND m.finished_at < c.before`);
      const dlqEntries = await count(`
        DELETE FROM dlq_entries d USING cutoff c
         WHERE d.organization_id = c.id AND d.created_at < c.before`);
      const events = await count(`
        DELETE FROM events e USING cutoff c
         WHERE e.organization_id = c.id AND e.accepted_at < c.before
           AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.event_id = e.id)`);
      const idempotencyKeys = await count(`
        DELETE FROM idempotency_keys k USING cutoff c
         WHERE k.organization_id = c.id AND k.created_at < c.before
           AND NOT EXISTS (SELECT 1 FROM events e WHERE e.id = k.event_id)`);
      // A past routing serves events accepted before it was replaced; none older than the plan's
      // period is still to be fanned out.
      const pastRoutings = await count(`
        DELETE FROM endpoint_routing_history h USING cutoff c
         WHERE h.organization_id = c.id AND h.replaced_at < c.before`);
      // An application that keeps its log for less than its plan: the same, by its own cutoff
      // (its endpoints' messages and DLQ entries, its events and their keys).
      const ofApplications = `endpoints e, app_cutoff c
         WHERE e.application_id = c.application_id`;
      const appAttempts = await count(`
        DELETE FROM attempts a USING messages m, ${ofApplications}
           AND a.message_id = m.id AND e.id = m.endpoint_id AND m.finished_at < c.before`);
      const appMessages = await count(`
        DELETE FROM messages m USING ${ofApplications}
           AND e.id = m.endpoint_id AND m.finished_at < c.before`);
      const appDlqEntries = await count(`
        DELETE FROM dlq_entries d USING ${ofApplications}
           AND e.id = d.endpoint_id AND d.created_at < c.before`);
      const appEvents = await count(`
        DELETE FROM events e USING app_cutoff c
         WHERE e.application_id = c.application_id AND e.accepted_at < c.before
           AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.event_id = e.id)`);
      const appKeys = await count(`
        DELETE FROM idempotency_keys k USING app_cutoff c
         WHERE k.application_id = c.application_id AND k.created_at < c.before
           AND NOT EXISTS (SELECT 1 FROM events e WHERE e.id = k.event_id)`);
      return {
        expired,
        messages: messages + appMessages,
        attempts: attempts + appAttempts,
        events: events + appEvents,
        dlqEntries: dlqEntries + appDlqEntries,
        idempotencyKeys: idempotencyKeys + appKeys,
        pastRoutings,
      };
    });
  }
}
