import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An application may keep its log for less than its organization's plan does (`retention_days`,
 * null: the plan's). Nullable, no default: adding it rewrites nothing.
 */
export class ApplicationRetention1765584000003 implements MigrationInterface {
  name = 'ApplicationRetention1765584000003';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE applications ADD COLUMN retention_days double precision`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE applications DROP COLUMN retention_days`);
  }
}
