import { ApiClient, createTenant, RunningStack, startStack } from '@hookbase/testing';

/** The admin lists the installation's organizations, a page at a time; an API key may not. */
describe('GET /api/organizations', () => {
  let stack: RunningStack;
  let admin: ApiClient;

  beforeAll(async () => {
    stack = await startStack();
    admin = new ApiClient(stack.url, stack.adminToken);
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('pages through every organization, newest first, with the admin token', async () => {
    const created: string[] = [];
    for (let n = 1; n <= 5; n += 1) {
      const response = await admin.post('/api/organizations', { name: `Org ${n}`, plan: 'free' });
      expect(response.status).toBe(201);
      created.push(response.body.data.id);
    }
    const listed: { id: string; name: string; plan: string }[] = [];
    let cursor: string | undefined;
    for (let page = 0; ; page += 1) {
      expect(page).toBeLessThan(10);
      const query = new URLSearchParams({ limit: '2', ...(cursor ? { cursor } : {}) });
      const response = await admin.get(`/api/organizations?${query}`);
      expect(response.status).toBe(200);
      expect(response.body.data.length).toBeLessThanOrEqual(2);
      listed.push(...response.body.data);
      cursor = response.body.nextCursor ?? undefined;
      if (!cursor) break;
    }
    // This stack's database holds only what this test made; ids start with their creation time
    // (to the millisecond), so newest first is descending id order.
    expect(listed.map((o) => o.id)).toEqual([...created].sort().reverse());
    expect(listed).toContainEqual(expect.objectContaining({ name: 'Org 5', plan: 'free' }));
  });

  it('answers 403 FORBIDDEN to an API key and 401 to no or a wrong credential', async () => {
    const tenant = await createTenant(stack.url, stack.adminToken);
    const byKey = await tenant.client.get('/api/organizations');
    expect({ status: byKey.status, code: byKey.body.error?.code }).toEqual({
      status: 403,
      code: 'FORBIDDEN',
    });
    expect(JSON.stringify(byKey.body)).not.toContain(tenant.organizationId);
    const anonymous = await new ApiClient(stack.url).get('/api/organizations');
    expect({ status: anonymous.status, code: anonymous.body.error?.code }).toEqual({
      status: 401,
      code: 'UNAUTHORIZED',
    });
    const wrong = await new ApiClient(stack.url, 'not-the-admin-token').get('/api/organizations');
    expect({ status: wrong.status, code: wrong.body.error?.code }).toEqual({
      status: 401,
      code: 'UNAUTHORIZED',
    });
  });

  it('answers 400 VALIDATION_FAILED naming a bad limit', async () => {
    const response = await admin.get('/api/organizations?limit=0');
    expect({ status: response.status, code: response.body.error?.code }).toEqual({
      status: 400,
      code: 'VALIDATION_FAILED',
    });
    expect(response.body.error.details.issues).toEqual([
      expect.objectContaining({ path: 'limit' }),
    ]);
  });
});
