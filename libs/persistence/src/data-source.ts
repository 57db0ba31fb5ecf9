import { DataSource } from 'typeorm';
import {
  registerMigrationSealer,
  sealPlaintextSecrets,
  type SecretSealer,
} from './endpoint-secret-sealer';
import { ENTITIES } from './entities';
import { MIGRATIONS } from './migrations';

export interface DatabaseOptions {
  url: string;
  poolSize: number;
  applicationName?: string;
}

export function createDataSource(options: DatabaseOptions): DataSource {
  return new DataSource({
    type: 'postgres',
    url: options.url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: ['error'],
    applicationName: options.applicationName ?? 'hookbase',
    extra: { max: options.poolSize, connectionTimeoutMillis: 5000 },
  });
}

// Several services may boot at once against one database; the lock makes them migrate in turn.
const MIGRATION_LOCK = 7_246_801;

/**
 * Applies pending migrations under the lock. With a `secretSealer` that seals (a key configured),
 * the migration that seals signing secrets uses it, and secrets left in plain text by an earlier
 * start without a key are sealed too.
 */
export async function runMigrations(
  dataSource: DataSource,
  options: { secretSealer?: SecretSealer } = {},
): Promise<number> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    if (options.secretSealer) registerMigrationSealer(dataSource, options.secretSealer);
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    if (options.secretSealer?.seals) {
      await dataSource.transaction((tx) => sealPlaintextSecrets(tx, options.secretSealer));
    }
    return applied.length;
  } finally {
    await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    await runner.release();
  }
}
