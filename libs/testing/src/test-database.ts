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

/** Builds the migrated template once per test run; each test file clones it (fast, isolated). */
export async function prepareTemplateDatabase(baseUrl: string): Promise<void> {
  await admin(baseUrl, async (client) => {
    await client.query(`DROP DATABASE IF EXISTS ${TEMPLATE_DATABASE} WITH (FORCE)`);
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
    drop: () =>
      admin(baseUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(
        () => undefined,
      ),
  };
}
