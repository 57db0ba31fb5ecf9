import { Client } from 'pg';
import { Webhook } from 'standardwebhooks';
import {
  createTenant,
  pollUntil,
  RunningStack,
  spawnHookbase,
  startStack,
  TestReceiver,
} from '@hookbase/testing';

/**
 * Endpoint signing secrets are sealed at rest with HOOKBASE_CREDENTIALS_KEY (ADR 0017): the rows
 * hold no secret in clear text after a create or a rotation, deliveries verify with the secrets
 * the API shows, the migration seals rows left in plain text, and production refuses to start
 * without the key.
 */
describe('endpoint signing secrets at rest', () => {
  let stack: RunningStack;
  let db: Client;
  const receiver = new TestReceiver();
  let receiverUrl: string;

  beforeAll(async () => {
    receiverUrl = await receiver.start();
    stack = await startStack({ HOOKBASE_RETRY_POLL_MS: '100' });
    db = new Client({ connectionString: stack.databaseUrl });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    await stack?.stop();
    await receiver.stop();
  });

  const anotherApi = (overrides: Record<string, string> = {}) =>
    spawnHookbase('api', { ...stack.process.env, PORT: '0', ...overrides });

  const storedSecrets = async (endpointId: string): Promise<string[]> =>
    (
      await db.query('SELECT secret FROM endpoint_secrets WHERE endpoint_id = $1', [endpointId])
    ).rows.map((row: { secret: string }) => row.secret);

  async function deliveredTo(path: string, count: number) {
    return pollUntil(
      async () => {
        const got = receiver.requests.filter((request) => request.path === path);
        return got.length >= count ? got : undefined;
      },
      { description: `${count} deliveries to ${path}` },
    );
  }

  const verifies = (secret: string, request: (typeof receiver.requests)[number]) => {
    try {
      new Webhook(secret).verify(request.body, {
        'webhook-id': String(request.headers['webhook-id']),
        'webhook-timestamp': String(request.headers['webhook-timestamp']),
        'webhook-signature': String(request.headers['webhook-signature']),
      });
      return true;
    } catch {
      return false;
    }
  };

  it('stores no secret in clear text after create and rotate; deliveries verify with both during the overlap', async () => {
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken, 'pro');
    const org = `/api/organizations/${organizationId}`;
    const created = await client.post(`${org}/webhook-endpoints`, {
      url: `${receiverUrl}/sealed`,
      eventTypes: ['sealed'],
    });
    expect(created.status).toBe(201);
    const endpointId: string = created.body.data.id;
    const shown = await client.get(`${org}/webhook-endpoints/${endpointId}/secret`);
    const first: string = shown.body.data.key;
    expect(first).toMatch(/^whsec_/);
    // Responses with a secret are never kept by a cache.
    expect(shown.headers.get('cache-control')).toBe('no-store');

    const afterCreate = await storedSecrets(endpointId);
    expect(afterCreate).toHaveLength(1);
    expect(afterCreate[0]).toMatch(/^v1:/);
    expect(afterCreate[0]).not.toContain(first);
    expect(afterCreate[0]).not.toContain(first.slice('whsec_'.length));

    const rotated = await client.post(`${org}/webhook-endpoints/${endpointId}/secret/rotate`, {
      overlapSeconds: 3600,
    });
    expect(rotated.status).toBe(200);
    expect(rotated.headers.get('cache-control')).toBe('no-store');
    const second: string = rotated.body.data.key;
    expect(second).not.toBe(first);
    const afterRotate = await storedSecrets(endpointId);
    expect(afterRotate).toHaveLength(2);
    for (const stored of afterRotate) {
      expect(stored).toMatch(/^v1:/);
      for (const secret of [first, second]) {
        expect(stored).not.toContain(secret.slice('whsec_'.length));
      }
    }
    expect((await client.get(`${org}/webhook-endpoints/${endpointId}/secret`)).body.data.key).toBe(
      second,
    );

    // Signatures are those of the secrets themselves: a receiver holding either one verifies.
    expect(
      (await client.post('/v1/events', { eventType: 'sealed', payload: { n: 1 } })).status,
    ).toBe(202);
    const [request] = await deliveredTo('/sealed', 1);
    expect(String(request.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifies(first, request)).toBe(true);
    expect(verifies(second, request)).toBe(true);
  });

  it('seals a secret stored in plain text: left as it is by a start without the key, sealed by the migration with it', async () => {
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken, 'pro');
    const org = `/api/organizations/${organizationId}`;
    const plaintext = `whsec_${Buffer.alloc(32, 5).toString('base64')}`;
    const created = await client.post(`${org}/webhook-endpoints`, {
      url: `${receiverUrl}/legacy`,
      eventTypes: ['legacy'],
      secret: plaintext,
    });
    expect(created.status).toBe(201);
    const endpointId: string = created.body.data.id;
    // The row as the code before sealing wrote it, and the sealing migration not yet applied.
    await db.query('UPDATE endpoint_secrets SET secret = $2 WHERE endpoint_id = $1', [
      endpointId,
      plaintext,
    ]);
    await db.query("DELETE FROM migrations WHERE name = 'SealEndpointSecrets1765152000000'");

    // A start without a key (allowed outside production) applies the migration but cannot seal.
    // (The api alone: it runs migrations like every service, and joins no consumer group, so the
    // stack's own dispatcher keeps its partitions.)
    const keyless = await anotherApi({ HOOKBASE_CREDENTIALS_KEY: '' });
    await keyless.process.waitForLine(
      /stored in plain text: they are sealed at the next start/,
      10_000,
    );
    await keyless.process.stop();
    expect(await storedSecrets(endpointId)).toEqual([plaintext]);

    // The migration again, now with the key: the row is sealed.
    await db.query("DELETE FROM migrations WHERE name = 'SealEndpointSecrets1765152000000'");
    const keyed = await anotherApi();
    await keyed.process.stop();
    const [stored] = await storedSecrets(endpointId);
    expect(stored).toMatch(/^v1:/);
    expect(stored).not.toContain(plaintext.slice('whsec_'.length));
    const applied = await db.query(
      "SELECT 1 FROM migrations WHERE name = 'SealEndpointSecrets1765152000000'",
    );
    expect(applied.rowCount).toBe(1);

    // The API still shows the secret, and deliveries are signed with it.
    expect((await client.get(`${org}/webhook-endpoints/${endpointId}/secret`)).body.data.key).toBe(
      plaintext,
    );
    expect(
      (await client.post('/v1/events', { eventType: 'legacy', payload: { n: 2 } })).status,
    ).toBe(202);
    const [request] = await deliveredTo('/legacy', 1);
    expect(verifies(plaintext, request)).toBe(true);
  });

  it("does not open a sealed secret copied into another endpoint's row: that endpoint's attempts are retried, nothing is sent", async () => {
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken, 'pro');
    const org = `/api/organizations/${organizationId}`;
    const create = async (path: string) => {
      const created = await client.post(`${org}/webhook-endpoints`, {
        url: `${receiverUrl}${path}`,
        eventTypes: ['copied'],
      });
      expect(created.status).toBe(201);
      return created.body.data.id as string;
    };
    const source = await create('/copy-source');
    const target = await create('/copy-target');
    await db.query(
      `UPDATE endpoint_secrets SET secret = (SELECT secret FROM endpoint_secrets WHERE endpoint_id = $1)
        WHERE endpoint_id = $2`,
      [source, target],
    );
    expect((await client.post('/v1/events', { eventType: 'copied', payload: {} })).status).toBe(
      202,
    );
    await deliveredTo('/copy-source', 1);
    const message = await pollUntil(
      async () => {
        const page = await client.get(`${org}/messages?endpointId=${target}`);
        const [first] = page.body.data;
        return first?.attempts >= 1 ? first : undefined;
      },
      { description: 'an attempt for the endpoint holding a copied secret' },
    );
    expect(message).toMatchObject({
      status: 'awaiting_retry',
      lastError: expect.stringContaining('no signing secret can be opened'),
    });
    expect(receiver.requests.filter((request) => request.path === '/copy-target')).toHaveLength(0);
  });

  it('refuses to start in production without HOOKBASE_CREDENTIALS_KEY, with a message naming it', async () => {
    const env = { ...stack.process.env, PORT: '0', NODE_ENV: 'production' };
    delete (env as Record<string, string | undefined>).HOOKBASE_CREDENTIALS_KEY;
    const failure = await spawnHookbase('api', env).then(
      async (started) => {
        await started.process.stop();
        return 'started';
      },
      (error: Error) => error.message,
    );
    expect(failure).toContain('process exited (78)');
    expect(failure).toContain(
      'HOOKBASE_CREDENTIALS_KEY: required in production (NODE_ENV=production)',
    );

    // The switch is not always on: with the key, production starts.
    const production = await anotherApi({ NODE_ENV: 'production' });
    await production.process.stop();
  });
});
