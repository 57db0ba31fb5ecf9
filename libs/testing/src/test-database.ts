import { createHash, randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { createDataSource, MIGRATIONS, runMigrations } from '@hookbase/persistence';

type Migration = { name: string; prototype: { up: unknown; down?: unknown } };

/**
 * The template database for a set of migrations: named after a digest of their names and code,
 * so runs of the same code share one template (built once, reused), and runs of different code
 * (another checkout, a migration being written) never touch each other's.
 */
export function templateNameFor(migrations: readonly Migration[]): string {
  const digest = createHash('sha256');
  for (const migration of migrations) {
    digest.update(`${migration.name}\n${String(migration.prototype.up)}\n`);
    digest.update(`${String(migration.prototype.down ?? '')}\n`);
  }
  return `hookbase_test_template_${digest.digest('hex').slice(0, 16)}`;
}

export const TEMPLATE_DATABASE = templateNameFor(MIGRATIONS);

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function admin<T>(baseUrl: string, run: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: withDatabase(baseUrl, 'postgres') });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** Insufficient privilege (42501), and a database still in use by other sessions (55006). */
const DROP_BLOCKED = new Set(['42501', '55006']);

/**
 * Drops a database and the sessions on it. `WITH (FORCE)` refuses when a session it may not end
 * is there, such as an autovacuum worker (run as the superuser) that started on a database a test
 * filled: then our own sessions are ended and a plain DROP, which stops autovacuum by itself, is
 * tried again a few times.
 */
export async function dropDatabase(client: Client, name: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await client.query(
        attempt === 1
          ? `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`
          : `DROP DATABASE IF EXISTS ${name}`,
      );
      return;
    } catch (error) {
      if (!DROP_BLOCKED.has((error as { code?: string }).code ?? '') || attempt >= 10) throw error;
      await client.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = $1 AND usename = current_user AND pid <> pg_backend_pid()`,
        [name],
      );
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    }
  }
}

/**
 * "That name is taken" as PostgreSQL reports it to the loser of two renames into one name:
 * `42P04 duplicate_database` when the winner had committed first, `23505 unique_violation` on
 * `pg_database_datname_index` when both reached the catalog at the same moment.
 */
const NAME_TAKEN = new Set(['42P04', '23505']);

/**
 * The advisory lock under which one preparation of a template runs at a time (a signed 64-bit key
 * from a digest of its name, so templates of other migration sets never wait for each other).
 */
export function templateLockKey(name: string): string {
  return createHash('sha256')
    .update(`hookbase template ${name}`)
    .digest()
    .readBigInt64BE(0)
    .toString();
}

/**
 * Makes sure the migrated template exists; each test file clones it (fast, isolated).
 *
 * Preparations are serialised by a session-level advisory lock in the `postgres` database, held
 * from the check to the rename: the first one builds, the others wait for it and then find the
 * template in place. The lock goes with its session, so a run killed while building frees it.
 * Under the lock, builds left by such a run are dropped. The template is built under a name of its
 * own and renamed into place only once migrated, so nothing ever clones a half-built one; should a
 * run that does not take the lock win the rename, its template is as complete as ours.
 */
export async function prepareTemplateDatabase(
  baseUrl: string,
  name: string = TEMPLATE_DATABASE,
): Promise<void> {
  await admin(baseUrl, async (client) => {
    await client.query('SELECT pg_advisory_lock($1::bigint)', [templateLockKey(name)]);
    try {
      const databases = async (pattern: string) =>
        (
          await client.query<{ datname: string }>(
            'SELECT datname FROM pg_database WHERE datname LIKE $1',
            [pattern],
          )
        ).rows.map((row) => row.datname);
      for (const stale of await databases(`${name}\\_b%`)) await dropDatabase(client, stale);
      if ((await databases(name)).length > 0) return;
      await buildTemplate(baseUrl, client, name);
    } finally {
      await client.query('SELECT pg_advisory_unlock($1::bigint)', [templateLockKey(name)]);
    }
  });
}

/** Builds the template under a name of its own, migrates it, and renames it into place. */
async function buildTemplate(baseUrl: string, client: Client, name: string): Promise<void> {
  const building = `${name}_b${randomBytes(4).toString('hex')}`;
  await client.query(`CREATE DATABASE ${building}`);
  try {
    const dataSource = createDataSource({ url: withDatabase(baseUrl, building), poolSize: 2 });
    await dataSource.initialize();
    try {
      await runMigrations(dataSource);
    } finally {
      await dataSource.destroy();
    }
    try {
      await client.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
    } catch (error) {
      // A run that does not take the lock (older code) put the same template in place first.
      if (!NAME_TAKEN.has((error as { code?: string }).code ?? '')) throw error;
    }
  } finally {
    await dropDatabase(client, building);
  }
}

/** A fresh database cloned from the migrated template; returns its URL and a way to drop it. */
export async function createTestDatabase(
  baseUrl: string,
): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `hookbase_test_${randomBytes(6).toString('hex')}`;
  await admin(baseUrl, (client) =>
    client.query(`CREATE DATABASE ${name} TEMPLATE ${TEMPLATE_DATABASE}`),
  );
  return {
    url: withDatabase(baseUrl, name),
    drop: () => admin(baseUrl, (client) => dropDatabase(client, name)),
  };
}
