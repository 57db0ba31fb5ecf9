import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Endpoint health and auto-disable: each endpoint's failure streak (consecutive failed attempts,
 * when the streak began, the last success), why and when it was disabled, and each organization's
 * auto-disable period (null: HOOKBASE_AUTO_DISABLE_AFTER). Defaults and nullable columns only:
 * adding them rewrites no row.
 */
export class EndpointHealth1765411200001 implements MigrationInterface {
  name = 'EndpointHealth1765411200001';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      ALTER TABLE endpoints
        ADD COLUMN consecutive_failures integer NOT NULL DEFAULT 0,
        ADD COLUMN failing_since timestamptz,
        ADD COLUMN last_success_at timestamptz,
        ADD COLUMN disabled_reason text,
        ADD COLUMN disabled_at timestamptz`);
    await runner.query(`ALTER TABLE organizations ADD COLUMN auto_disable_after_ms bigint`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE organizations DROP COLUMN auto_disable_after_ms`);
    await runner.query(`
      ALTER TABLE endpoints
        DROP COLUMN consecutive_failures,
        DROP COLUMN failing_since,
        DROP COLUMN last_success_at,
        DROP COLUMN disabled_reason,
        DROP COLUMN disabled_at`);
  }
}
