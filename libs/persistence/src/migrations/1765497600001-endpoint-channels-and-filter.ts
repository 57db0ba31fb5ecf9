import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Endpoints listen on channels (empty: every channel) and may carry a content filter (ADR 0034),
 * both read by the fan-out's routing rule. Defaults keep every existing endpoint receiving what it
 * received before. An event keeps its channels (shown with it), and an idempotency key its event's,
 * for the repeat that re-sends it.
 */
export class EndpointChannelsAndFilter1765497600001 implements MigrationInterface {
  name = 'EndpointChannelsAndFilter1765497600001';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(
      `ALTER TABLE endpoints ADD COLUMN channels text[] NOT NULL DEFAULT '{}', ADD COLUMN filter jsonb`,
    );
    await runner.query(`ALTER TABLE idempotency_keys ADD COLUMN channels text[]`);
    await runner.query(`ALTER TABLE events ADD COLUMN channels jsonb NOT NULL DEFAULT '[]'`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE events DROP COLUMN channels`);
    await runner.query(`ALTER TABLE idempotency_keys DROP COLUMN channels`);
    await runner.query(`ALTER TABLE endpoints DROP COLUMN channels, DROP COLUMN filter`);
  }
}
