import { MigrationInterface, QueryRunner } from 'typeorm';
import { migrationSealerFor, sealPlaintextSecrets } from '../endpoint-secret-sealer';

/**
 * Seals the endpoint signing secrets stored in plain text with HOOKBASE_CREDENTIALS_KEY (ADR 0017).
 * The key comes from the configuration of the service that runs the migrations (runMigrations
 * registers its sealer for the data source). Without a key, which only a non-production
 * installation may lack, the rows are left as they are and the next boot with a key seals them.
 */
export class SealEndpointSecrets1765152000000 implements MigrationInterface {
  name = 'SealEndpointSecrets1765152000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await sealPlaintextSecrets(queryRunner, migrationSealerFor(queryRunner.connection));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // Back to plain text for the code before this migration, which cannot read sealed secrets.
    const sealer = migrationSealerFor(queryRunner.connection);
    const rows = (await queryRunner.query(
      `SELECT id, endpoint_id, secret FROM endpoint_secrets WHERE NOT starts_with(secret, 'whsec_')`,
    )) as { id: string; endpoint_id: string; secret: string }[];
    if (rows.length > 0 && !sealer?.seals) {
      throw new Error('reverting needs HOOKBASE_CREDENTIALS_KEY to open the sealed secrets');
    }
    for (const row of rows) {
      await queryRunner.query('UPDATE endpoint_secrets SET secret = $2 WHERE id = $1', [
        row.id,
        sealer!.open(row.secret, row.endpoint_id),
      ]);
    }
  }
}
