import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Explicit delivery state (ADR 0019): `route` names what owns a message (`stream`, `schedule`,
 * `lane`, `poll`, `final`), backfilled from the columns it used to be read off, and checked
 * against the statuses each route allows. The retry claim's lease gets a column of its own,
 * `claim_until`, so `next_attempt_at` only ever means the next attempt.
 *
 * The lists below are this migration's snapshot of `libs/domain/src/delivery-state.ts` (a spec
 * checks they agree); a later change to that table comes with a migration of its own.
 */
export class ExplicitDeliveryState1765238400000 implements MigrationInterface {
  name = 'ExplicitDeliveryState1765238400000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      ALTER TABLE messages ADD COLUMN route text, ADD COLUMN claim_until timestamptz;
      -- A message in flight with a next attempt was claimed by the retry scheduler: that time
      -- was its claim's lease.
      UPDATE messages SET
        route = CASE
          WHEN status IN ('succeeded', 'failed', 'cancelled', 'skipped', 'expired') THEN 'final'
          WHEN poll_seq IS NOT NULL THEN 'poll'
          WHEN fifo_seq IS NOT NULL OR status = 'fifo_waiting' THEN 'lane'
          WHEN status = 'awaiting_retry' THEN 'schedule'
          WHEN status = 'in_flight' AND next_attempt_at IS NOT NULL THEN 'schedule'
          ELSE 'stream' END,
        claim_until = CASE WHEN status = 'in_flight' AND fifo_seq IS NULL THEN next_attempt_at END,
        next_attempt_at = CASE WHEN status = 'in_flight' THEN NULL ELSE next_attempt_at END;
      ALTER TABLE messages ALTER COLUMN route SET NOT NULL,
        ADD CONSTRAINT ck_messages_route CHECK (
             (route = 'stream' AND status IN ('pending', 'in_flight'))
          OR (route = 'schedule' AND status IN ('awaiting_retry', 'in_flight'))
          OR (route = 'lane' AND status IN ('fifo_waiting', 'in_flight', 'awaiting_retry'))
          OR (route = 'poll' AND status IN ('pending'))
          OR (route = 'final' AND status IN ('succeeded', 'failed', 'cancelled', 'skipped', 'expired')));
      -- The retry scheduler's claim: due retries and claims whose lease ran out, in due order.
      DROP INDEX idx_messages_due;
      CREATE INDEX idx_messages_schedule_due ON messages ((COALESCE(claim_until, next_attempt_at)))
        WHERE route = 'schedule';
      DROP INDEX idx_messages_fifo_queue;
      CREATE INDEX idx_messages_lane_queue ON messages (endpoint_id, fifo_seq) WHERE route = 'lane';
      DROP INDEX idx_messages_poll_pending;
      CREATE INDEX idx_messages_poll_pending ON messages (endpoint_id, poll_seq) WHERE route = 'poll';
    `);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`
      DROP INDEX idx_messages_poll_pending;
      CREATE INDEX idx_messages_poll_pending ON messages (endpoint_id, poll_seq)
        WHERE poll_seq IS NOT NULL AND status = 'pending';
      DROP INDEX idx_messages_lane_queue;
      CREATE INDEX idx_messages_fifo_queue ON messages (endpoint_id, fifo_seq)
        WHERE fifo_seq IS NOT NULL AND status IN ('fifo_waiting', 'in_flight', 'awaiting_retry');
      DROP INDEX idx_messages_schedule_due;
      CREATE INDEX idx_messages_due ON messages (next_attempt_at)
        WHERE status IN ('awaiting_retry', 'in_flight') AND next_attempt_at IS NOT NULL;
      UPDATE messages SET next_attempt_at = claim_until WHERE claim_until IS NOT NULL;
      ALTER TABLE messages DROP CONSTRAINT ck_messages_route, DROP COLUMN claim_until,
        DROP COLUMN route;
    `);
  }
}
