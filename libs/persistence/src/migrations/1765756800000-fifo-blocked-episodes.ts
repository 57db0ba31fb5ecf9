import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A FIFO lane's blocked episode (for `fifo.queue.blocked` / `fifo.queue.unblocked`) is kept with
 * its lease, so a restart or another dispatcher continues it: the head it is about, since when,
 * and when it was reported (null: not yet). Nullable columns: adding them rewrites no row.
 */
export class FifoBlockedEpisodes1765756800000 implements MigrationInterface {
  name = 'FifoBlockedEpisodes1765756800000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      ALTER TABLE fifo_lanes
        ADD COLUMN episode_head text,
        ADD COLUMN episode_since timestamptz,
        ADD COLUMN episode_reported_at timestamptz
    `);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`
      ALTER TABLE fifo_lanes
        DROP COLUMN episode_head,
        DROP COLUMN episode_since,
        DROP COLUMN episode_reported_at
    `);
  }
}
