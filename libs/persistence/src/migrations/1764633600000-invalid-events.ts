import { MigrationInterface, QueryRunner } from 'typeorm';

/** Records on the events topic that could not be accepted (direct producers), kept for listing. */
export class InvalidEvents1764633600000 implements MigrationInterface {
  name = 'InvalidEvents1764633600000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE invalid_events (
        id text PRIMARY KEY,
        topic text NOT NULL,
        partition integer NOT NULL,
        "offset" bigint NOT NULL,
        record_key text,
        value_excerpt text,
        reason text NOT NULL,
        received_at timestamptz NOT NULL
      );
      CREATE UNIQUE INDEX uq_invalid_events_position ON invalid_events (topic, partition, "offset");
    `);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('DROP TABLE invalid_events');
  }
}
