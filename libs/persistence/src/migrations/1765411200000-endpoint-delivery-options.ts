import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An http endpoint's receiver options (headers, sealed auth, timeout, trusted CA) in one nullable
 * jsonb column on the row the dispatcher already reads: null when none is set, so adding it
 * rewrites nothing and the common path reads nothing more.
 */
export class EndpointDeliveryOptions1765411200000 implements MigrationInterface {
  name = 'EndpointDeliveryOptions1765411200000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE endpoints ADD COLUMN delivery_options jsonb`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE endpoints DROP COLUMN delivery_options`);
  }
}
