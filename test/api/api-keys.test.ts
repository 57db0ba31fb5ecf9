import { ApiClient, createTenant, pollUntil, RunningStack, startStack } from '@hookbase/testing';

const CACHE_MS = 1_000;

/**
 * API keys through the admin API: a name and an expiry, a list that never shows a key, revocation
 * (at once where it was revoked, within HOOKBASE_API_KEY_CACHE_MS in every other process) and
 * rotation with or without an overlap. Two processes share the database, as replicas do.
 */
describe('API keys', () => {
  let stack: RunningStack;
  let admin: ApiClient;
  let replicaUrl: string;

  beforeAll(async () => {
    stack = await startStack({ HOOKBASE_API_KEY_CACHE_MS: String(CACHE_MS) });
    admin = new ApiClient(stack.url, stack.adminToken);
    replicaUrl = (await stack.startAnother()).url;
  });

  afterAll(async () => {
    await stack?.stop();
  });

  const keysPath = (organizationId: string) => `/api/organizations/${organizationId}/api-keys`;
  const statusWith = async (baseUrl: string, key: string, organizationId: string) =>
    (await new ApiClient(baseUrl, key).get(`/api/organizations/${organizationId}`)).status;

  it('creates a named key with an expiry and lists keys by prefix and metadata, never the key', async () => {
    const { organizationId, apiKey } = await createTenant(stack.url, stack.adminToken);
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const created = await admin.post(keysPath(organizationId), { name: 'ci deploys', expiresAt });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({
      id: expect.stringMatching(/^key_/),
      key: expect.stringMatching(/^hb_[A-Za-z0-9_-]{43}$/),
      name: 'ci deploys',
      state: 'active',
      expiresAt,
      revokedAt: null,
      lastUsedAt: null,
    });
    const key: string = created.body.data.key;
    expect(created.body.data.prefix).toBe(key.slice(0, 10));
    expect(await statusWith(stack.url, key, organizationId)).toBe(200);

    const listed = await admin.get(keysPath(organizationId));
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((k: { id: string }) => k.id)).toEqual([
      created.body.data.id,
      expect.stringMatching(/^key_/),
    ]);
    const text = JSON.stringify(listed.body);
    for (const secret of [key, apiKey]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(secret.slice(10));
    }
    expect(listed.body.data[0]).not.toHaveProperty('key');
    expect(listed.body.data[0]).toMatchObject({ name: 'ci deploys', prefix: key.slice(0, 10) });
    expect(listed.body.data[0].lastUsedAt).toEqual(expect.any(String));
  });

  it('refuses an expiry in the past and answers unknown keys and organizations with codes', async () => {
    const { organizationId } = await createTenant(stack.url, stack.adminToken);
    const other = await createTenant(stack.url, stack.adminToken);
    const past = await admin.post(keysPath(organizationId), {
      expiresAt: new Date(Date.now() - 1_000).toISOString(),
    });
    expect(past.status).toBe(400);
    expect(past.body.error.code).toBe('VALIDATION_FAILED');
    const otherKeyId = (await admin.get(keysPath(other.organizationId))).body.data[0].id;
    // Another organization's key is not found under this one.
    const foreign = await admin.delete(`${keysPath(organizationId)}/${otherKeyId}`);
    expect({ status: foreign.status, code: foreign.body.error?.code }).toEqual({
      status: 404,
      code: 'API_KEY_NOT_FOUND',
    });
    expect(await statusWith(stack.url, other.apiKey, other.organizationId)).toBe(200);
    const rotateForeign = await admin.post(`${keysPath(organizationId)}/${otherKeyId}/rotate`, {});
    expect(rotateForeign.body.error.code).toBe('API_KEY_NOT_FOUND');
    const unknownOrg = await admin.get(keysPath('org_00000000000000000000000000'));
    expect(unknownOrg.body.error.code).toBe('ORGANIZATION_NOT_FOUND');
    // Only the admin token manages keys.
    const byKey = await other.client.get(keysPath(other.organizationId));
    expect(byKey.status).toBe(401);
  });

  it('a revoked key stops at once where it was revoked and within the cache time elsewhere', async () => {
    const { organizationId, apiKey } = await createTenant(stack.url, stack.adminToken);
    // Both processes have checked the key, so both remember it.
    expect(await statusWith(stack.url, apiKey, organizationId)).toBe(200);
    expect(await statusWith(replicaUrl, apiKey, organizationId)).toBe(200);
    const keyId = (await admin.get(keysPath(organizationId))).body.data[0].id;
    const revoked = await admin.delete(`${keysPath(organizationId)}/${keyId}`);
    const revokedAt = Date.now();
    expect(revoked.status).toBe(200);
    expect(revoked.body.data).toMatchObject({ id: keyId, state: 'revoked' });
    expect(revoked.body.data.revokedAt).toEqual(expect.any(String));
    expect(await statusWith(stack.url, apiKey, organizationId)).toBe(401);
    await pollUntil(async () => (await statusWith(replicaUrl, apiKey, organizationId)) === 401, {
      timeoutMs: CACHE_MS + 4_000,
      intervalMs: 100,
      description: 'the other process refusing the revoked key',
    });
    expect(Date.now() - revokedAt).toBeLessThan(CACHE_MS + 4_000);
    // Revoking again changes nothing.
    const again = await admin.delete(`${keysPath(organizationId)}/${keyId}`);
    expect(again.body.data.revokedAt).toBe(revoked.body.data.revokedAt);
    const rotate = await admin.post(`${keysPath(organizationId)}/${keyId}/rotate`, {});
    expect({ status: rotate.status, code: rotate.body.error?.code }).toEqual({
      status: 409,
      code: 'API_KEY_REVOKED',
    });
  });

  it('an expired key is refused', async () => {
    const { organizationId } = await createTenant(stack.url, stack.adminToken);
    const expiresAt = Date.now() + 2_000;
    const created = await admin.post(keysPath(organizationId), {
      expiresAt: new Date(expiresAt).toISOString(),
    });
    const key: string = created.body.data.key;
    expect(await statusWith(replicaUrl, key, organizationId)).toBe(200);
    await pollUntil(async () => (await statusWith(replicaUrl, key, organizationId)) === 401, {
      timeoutMs: 10_000,
      intervalMs: 200,
      description: 'the key refused once it has expired',
    });
    expect(Date.now()).toBeGreaterThanOrEqual(expiresAt);
    const listed = await admin.get(keysPath(organizationId));
    expect(listed.body.data.find((k: { id: string }) => k.id === created.body.data.id).state).toBe(
      'expired',
    );
  });

  it('rotation gives a new key with the same name; the old one stops at once', async () => {
    const { organizationId } = await createTenant(stack.url, stack.adminToken);
    const created = await admin.post(keysPath(organizationId), { name: 'worker' });
    const oldKey: string = created.body.data.key;
    expect(await statusWith(stack.url, oldKey, organizationId)).toBe(200);
    const rotated = await admin.post(`${keysPath(organizationId)}/${created.body.data.id}/rotate`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.data).toMatchObject({
      name: 'worker',
      key: expect.stringMatching(/^hb_/),
      previous: { id: created.body.data.id, state: 'revoked' },
    });
    expect(rotated.body.data.key).not.toBe(oldKey);
    expect(await statusWith(stack.url, rotated.body.data.key, organizationId)).toBe(200);
    expect(await statusWith(stack.url, oldKey, organizationId)).toBe(401);
  });

  it('rotation with an overlap keeps the old key working until the overlap ends', async () => {
    const { organizationId } = await createTenant(stack.url, stack.adminToken);
    const created = await admin.post(keysPath(organizationId), {});
    const oldKey: string = created.body.data.key;
    const rotated = await admin.post(`${keysPath(organizationId)}/${created.body.data.id}/rotate`, {
      overlapSeconds: 2,
    });
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.previous).toMatchObject({ state: 'active', revokedAt: null });
    expect(new Date(rotated.body.data.previous.expiresAt).getTime()).toBeLessThanOrEqual(
      Date.now() + 2_000,
    );
    expect(await statusWith(stack.url, oldKey, organizationId)).toBe(200);
    expect(await statusWith(stack.url, rotated.body.data.key, organizationId)).toBe(200);
    await pollUntil(async () => (await statusWith(stack.url, oldKey, organizationId)) === 401, {
      timeoutMs: 10_000,
      intervalMs: 200,
      description: 'the old key refused after the overlap',
    });
    expect(await statusWith(stack.url, rotated.body.data.key, organizationId)).toBe(200);
  });
});
