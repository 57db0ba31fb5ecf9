import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An event's payload kept as the text it was published as (`json`), not taken apart (`jsonb`,
 * which orders keys by length and merges duplicates). Every attempt of a message reads the
 * payload from here, so each one sends the keys in the order the producer wrote them, the first
 * attempt and the retries alike. Nothing queries inside payloads. Rewrites `events`: the fan-out
 * cannot record events while it runs.
 */
export class EventPayloadAsPublished1766016000000 implements MigrationInterface {
  name = 'EventPayloadAsPublished1766016000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE events ALTER COLUMN payload TYPE json USING payload::json`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE events ALTER COLUMN payload TYPE jsonb USING payload::jsonb`);
  }
}
