import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Endpoints listen on channels (empty: every channel) and may carry a content filter (ADR 0034),
 * both read by the fan-out's routing rule. Defaults keep every existing endpoint receiving what it
 * received before. An idempotency key keeps its event's channels, for the repeat that re-sends it.
 */
export class EndpointChannelsAndFilter1765497600001 implements MigrationInterface {
  name = 'EndpointChannelsAndFilter1765497600001';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(
      `ALTER TABLE endpoints ADD COLUMN channels text[] NOT NULL DEFAULT '{}', ADD COLUMN filter jsonb`,
    );
    await runner.query(`ALTER TABLE idempotency_keys ADD COLUMN channels text[]`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE idempotency_keys DROP COLUMN channels`);
    await runner.query(`ALTER TABLE endpoints DROP COLUMN channels, DROP COLUMN filter`);
  }
}
