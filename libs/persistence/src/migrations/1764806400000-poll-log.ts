import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Polling endpoints (ADR 0011): a message for a polling endpoint has its place in the endpoint's
 * poll log (`poll_seq`, 1, 2, 3 … in acceptance order). `poll_counters` holds each log's last
 * place; raising it row-locks it until the writer commits, so places commit in their order and a
 * consumer past place n never sees a smaller one appear later.
 */
export class PollLog1764806400000 implements MigrationInterface {
  name = 'PollLog1764806400000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      ALTER TABLE messages ADD COLUMN poll_seq bigint;
      CREATE UNIQUE INDEX uq_messages_poll_log ON messages (endpoint_id, poll_seq)
        WHERE poll_seq IS NOT NULL;
      -- What a poll acknowledges, and what retention expires: places not yet fetched.
      CREATE INDEX idx_messages_poll_pending ON messages (endpoint_id, poll_seq)
        WHERE poll_seq IS NOT NULL AND status = 'pending';
      CREATE TABLE poll_counters (
        endpoint_id text PRIMARY KEY,
        last_seq bigint NOT NULL
      );
    `);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`
      DROP TABLE poll_counters;
      DROP INDEX idx_messages_poll_pending;
      DROP INDEX uq_messages_poll_log;
      ALTER TABLE messages DROP COLUMN poll_seq;
    `);
  }
}
