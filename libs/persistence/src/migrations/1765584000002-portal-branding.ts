import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An organization's portal branding (display name, logo, primary colour) and the origins allowed
 * to embed its portal. Nullable, no default: adding it rewrites nothing; null is no branding and
 * no embedding.
 */
export class PortalBranding1765584000002 implements MigrationInterface {
  name = 'PortalBranding1765584000002';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE organizations ADD COLUMN portal jsonb`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE organizations DROP COLUMN portal`);
  }
}
