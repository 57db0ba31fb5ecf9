import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { dropDatabase, prepareTemplateDatabase, testEnvironment } from '@hookbase/testing';

// The migrated template every test file clones (libs/testing/src/test-database.ts): built once per
// migration set, renamed into place only when complete, shared by runs at the same time.
describe('the test template database', () => {
  const { databaseUrl } = testEnvironment();
  const name = `hookbase_test_template_t${randomBytes(4).toString('hex')}`;
  let client: Client;

  const databases = async (prefix: string) =>
    (
      await client.query<{ datname: string }>(
        'SELECT datname FROM pg_database WHERE datname LIKE $1 ORDER BY datname',
        [`${prefix}%`],
      )
    ).rows.map((row) => row.datname);

  beforeAll(async () => {
    const url = new URL(databaseUrl);
    url.pathname = '/postgres';
    client = new Client({ connectionString: url.toString() });
    await client.connect();
  });

  afterAll(async () => {
    for (const database of await databases(name)) await dropDatabase(client, database);
    await client.end();
  });

  // The losing rename's window is narrow: several rounds of several preparations each, so a
  // helper that mistakes any interleaving for an error fails here (the one that took 23505 for a
  // failure did, in two runs of three).
  const ROUNDS = 6;
  const AT_ONCE = 4;

  it('is built once by runs preparing it at the same time, and left with nothing half-built', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const roundName = `${name}_r${round}`;
      const outcomes = await Promise.allSettled(
        Array.from({ length: AT_ONCE }, () => prepareTemplateDatabase(databaseUrl, roundName)),
      );
      const failures = outcomes.flatMap((outcome) =>
        outcome.status === 'rejected' ? [String(outcome.reason)] : [],
      );
      expect({ round, failures }).toEqual({ round, failures: [] });
      expect(await databases(roundName)).toEqual([roundName]);
      await dropDatabase(client, roundName);
    }

    await Promise.all([
      prepareTemplateDatabase(databaseUrl, name),
      prepareTemplateDatabase(databaseUrl, name),
      prepareTemplateDatabase(databaseUrl, name),
    ]);
    expect(await databases(name)).toEqual([name]);

    // A clone of it has the schema: the migrations ran before it was put in place.
    const clone = `${name}_clone`;
    await client.query(`CREATE DATABASE ${clone} TEMPLATE ${name}`);
    const url = new URL(databaseUrl);
    url.pathname = `/${clone}`;
    const cloned = new Client({ connectionString: url.toString() });
    await cloned.connect();
    try {
      const tables = await cloned.query<{ tablename: string }>(
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public'",
      );
      expect(tables.rows.map((row) => row.tablename)).toEqual(
        expect.arrayContaining(['organizations', 'events', 'messages', 'endpoints']),
      );
    } finally {
      await cloned.end();
    }
    await dropDatabase(client, clone);

    // Once in place it is reused: preparing again builds nothing.
    const oidBefore = (await client.query('SELECT oid FROM pg_database WHERE datname = $1', [name]))
      .rows[0].oid;
    await prepareTemplateDatabase(databaseUrl, name);
    const oidAfter = (await client.query('SELECT oid FROM pg_database WHERE datname = $1', [name]))
      .rows[0].oid;
    expect(oidAfter).toBe(oidBefore);
  });

  it('drops a build left half-done by a run that was killed, and builds the template anew', async () => {
    const stale = `${name}_s`;
    const leftover = `${stale}_bdeadbeef`;
    await client.query(`CREATE DATABASE ${leftover}`);
    await prepareTemplateDatabase(databaseUrl, stale);
    expect(await databases(stale)).toEqual([stale]);
  });
});
