import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The event type catalog (ADR 0031): one row per declared type of an organization, its JSON Schema
 * and example, and a version that grows with every change so that each process knows when a
 * compiled schema it keeps is stale. The organization's `event_type_policy` says what a publish
 * must satisfy; `open` (the default) is how every organization behaved before.
 */
export class EventTypes1765497600000 implements MigrationInterface {
  name = 'EventTypes1765497600000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(
      `ALTER TABLE organizations ADD COLUMN event_type_policy text NOT NULL DEFAULT 'open'
         CONSTRAINT chk_organizations_event_type_policy
         CHECK (event_type_policy IN ('open', 'declared', 'validated'))`,
    );
    await runner.query(`
      CREATE TABLE event_types (
        organization_id text NOT NULL REFERENCES organizations (id),
        name text NOT NULL,
        description text NOT NULL DEFAULT '',
        schema jsonb,
        example jsonb,
        deprecated boolean NOT NULL DEFAULT false,
        archived boolean NOT NULL DEFAULT false,
        version integer NOT NULL DEFAULT 1,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        CONSTRAINT pk_event_types PRIMARY KEY (organization_id, name)
      )`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE event_types`);
    await runner.query(`ALTER TABLE organizations DROP COLUMN event_type_policy`);
  }
}
