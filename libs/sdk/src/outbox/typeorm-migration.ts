import type { MigrationInterface, QueryRunner } from 'typeorm';
import { OUTBOX_DROP_SQL, OUTBOX_SCHEMA_SQL } from './schema';

/**
 * The outbox tables as a TypeORM migration: add it to your DataSource's `migrations` beside your
 * own. The same schema as `migrations/0001_hookbase_outbox.sql`.
 */
export class HookbaseOutbox1796169600000 implements MigrationInterface {
  name = 'HookbaseOutbox1796169600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(OUTBOX_SCHEMA_SQL);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(OUTBOX_DROP_SQL);
  }
}
