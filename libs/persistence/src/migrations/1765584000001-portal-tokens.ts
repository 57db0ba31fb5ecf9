import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Portal tokens: bearer tokens scoped to one application, stored only as their SHA-256 (like API
 * keys), each with its expiry; revoking an application's access stamps all of its tokens.
 */
export class PortalTokens1765584000001 implements MigrationInterface {
  name = 'PortalTokens1765584000001';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE portal_tokens (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        application_id text NOT NULL REFERENCES applications(id) ON DELETE CASCADE,
        token_hash text NOT NULL UNIQUE,
        read_only boolean NOT NULL,
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        revoked_at timestamptz
      )`);
    await runner.query(
      `CREATE INDEX idx_portal_tokens_application ON portal_tokens (application_id)
        WHERE revoked_at IS NULL`,
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE portal_tokens`);
  }
}
