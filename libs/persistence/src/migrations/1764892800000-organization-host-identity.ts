import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An organization's opt-in to the Hookbase host's cloud identity (ADR 0014): NULL, the default,
 * is off; a JSON object (`{}` or lists of AWS accounts, AWS regions, Google projects) is on for
 * those targets. Existing organizations start off: their cloud endpoints need credentials.
 */
export class OrganizationHostIdentity1764892800000 implements MigrationInterface {
  name = 'OrganizationHostIdentity1764892800000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE organizations ADD COLUMN host_cloud_identity jsonb`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE organizations DROP COLUMN host_cloud_identity`);
  }
}
