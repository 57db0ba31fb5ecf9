import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The events list filtered by application reads this index newest first instead of walking the
 * organization's every event. Partial: events of no application (every event of an organization
 * that never uses applications) are not in it and cost nothing more to write.
 */
export class EventsByApplication1765670400000 implements MigrationInterface {
  name = 'EventsByApplication1765670400000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(
      `CREATE INDEX idx_events_application ON events (organization_id, application_id, id)
        WHERE application_id IS NOT NULL`,
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX idx_events_application`);
  }
}
