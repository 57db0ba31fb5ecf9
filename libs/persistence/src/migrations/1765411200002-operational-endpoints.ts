import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Operational endpoints are endpoints (http, with their own secret) marked `operational`: they
 * receive only the operational events addressed to them. A default: adding it rewrites no row.
 */
export class OperationalEndpoints1765411200002 implements MigrationInterface {
  name = 'OperationalEndpoints1765411200002';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(
      `ALTER TABLE endpoints ADD COLUMN operational boolean NOT NULL DEFAULT false`,
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE endpoints DROP COLUMN operational`);
  }
}
