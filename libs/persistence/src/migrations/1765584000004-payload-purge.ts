import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * When an event's payload was erased on request (null: never). The event, its messages and their
 * attempts keep their rows; only the payload is gone. Nullable, no default: rewrites nothing.
 */
export class PayloadPurge1765584000004 implements MigrationInterface {
  name = 'PayloadPurge1765584000004';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE events ADD COLUMN payload_purged_at timestamptz`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE events DROP COLUMN payload_purged_at`);
  }
}
