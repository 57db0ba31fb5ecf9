import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Operational events wait here until a relay has put them on the events topic: written with (or
 * right after) the change that caused them, so a Kafka outage delays them and loses none.
 */
export class OperationalOutbox1765756800001 implements MigrationInterface {
  name = 'OperationalOutbox1765756800001';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE operational_outbox (
        id bigserial PRIMARY KEY,
        organization_id text NOT NULL,
        envelope jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )
    `);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE operational_outbox`);
  }
}
