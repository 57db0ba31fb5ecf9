import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * API keys get a name, an optional expiry, and the time they were last looked up (set when a key
 * is checked against PostgreSQL, so at most once per cache period and process). `revoked_at`
 * existed already; the revoke and rotate routes now set it.
 */
export class ApiKeyLifecycle1764979200000 implements MigrationInterface {
  name = 'ApiKeyLifecycle1764979200000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      ALTER TABLE api_keys ADD COLUMN name text;
      ALTER TABLE api_keys ADD COLUMN expires_at timestamptz;
      ALTER TABLE api_keys ADD COLUMN last_used_at timestamptz;
    `);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`
      ALTER TABLE api_keys DROP COLUMN last_used_at;
      ALTER TABLE api_keys DROP COLUMN expires_at;
      ALTER TABLE api_keys DROP COLUMN name;
    `);
  }
}
