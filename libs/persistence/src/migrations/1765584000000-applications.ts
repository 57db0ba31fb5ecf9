import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Applications group an organization's endpoints by the producer's own customer. An endpoint
 * belongs to at most one, for good; an event names the one it is for (null: endpoints of none).
 * The new columns are nullable without a default: adding them rewrites nothing, and every row
 * already stored is of no application, as before.
 */
export class Applications1765584000000 implements MigrationInterface {
  name = 'Applications1765584000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE applications (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        uid text,
        name text NOT NULL,
        metadata jsonb NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      )`);
    await runner.query(
      `CREATE INDEX idx_applications_organization ON applications (organization_id, id)`,
    );
    // A uid names one application of its organization.
    await runner.query(
      `CREATE UNIQUE INDEX ux_applications_uid ON applications (organization_id, uid)
        WHERE uid IS NOT NULL`,
    );
    await runner.query(`ALTER TABLE endpoints ADD COLUMN application_id text`);
    await runner.query(
      `CREATE INDEX idx_endpoints_application ON endpoints (application_id)
        WHERE application_id IS NOT NULL`,
    );
    await runner.query(`ALTER TABLE events ADD COLUMN application_id text`);
    await runner.query(`ALTER TABLE idempotency_keys ADD COLUMN application_id text`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE idempotency_keys DROP COLUMN application_id`);
    await runner.query(`ALTER TABLE events DROP COLUMN application_id`);
    await runner.query(`DROP INDEX idx_endpoints_application`);
    await runner.query(`ALTER TABLE endpoints DROP COLUMN application_id`);
    await runner.query(`DROP TABLE applications`);
  }
}
