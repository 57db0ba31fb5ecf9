import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { createDataSource, runMigrations } from '@hookbase/persistence';

export const TEMPLATE_DATABASE = 'hookbase_test_template';

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

/** Builds the migrated template once per test run; each test file clones it (fast, isolated). */
export async function prepareTemplateDatabase(baseUrl: string): Promise<void> {
  await admin(baseUrl, async (client) => {
    await dropDatabase(client, TEMPLATE_DATABASE);
    await client.query(`CREATE DATABASE ${TEMPLATE_DATABASE}`);
  });
  const dataSource = createDataSource({
    url: withDatabase(baseUrl, TEMPLATE_DATABASE),
    poolSize: 2,
  });
  await dataSource.initialize();
  try {
    await runMigrations(dataSource);
  } finally {
    await dataSource.destroy();
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
