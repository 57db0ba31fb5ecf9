import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { dropDatabase, testEnvironment } from '@hookbase/testing';

/** An empty database of the test's own, standing in for a producer's application database. */
export async function createProducerDatabase(): Promise<{
  url: string;
  drop: () => Promise<void>;
}> {
  const base = new URL(testEnvironment().databaseUrl);
  const name = `producer_${randomBytes(6).toString('hex')}`;
  const admin = async (run: (client: Client) => Promise<unknown>) => {
    const url = new URL(base);
    url.pathname = '/postgres';
    const client = new Client({ connectionString: url.toString() });
    await client.connect();
    try {
      await run(client);
    } finally {
      await client.end();
    }
  };
  await admin((client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(base);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin((client) => dropDatabase(client, name)) };
}
