import {
  ApiClient,
  createTenant,
  pollUntil,
  RunningStack,
  startStack,
  TestReceiver,
} from '@hookbase/testing';

/**
 * Bad input gets a clear, coded error and never a 500, and what was accepted before it is still
 * delivered. This stack refuses private delivery targets, as a production install does.
 */
describe('the HTTP API refuses bad input clearly', () => {
  let stack: RunningStack;
  let admin: ApiClient;
  let tenant: Awaited<ReturnType<typeof createTenant>>;
  let other: Awaited<ReturnType<typeof createTenant>>;
  let endpointsPath: string;

  beforeAll(async () => {
    stack = await startStack({ HOOKBASE_ALLOW_PRIVATE_TARGETS: 'false' });
    admin = new ApiClient(stack.url, stack.adminToken);
    tenant = await createTenant(stack.url, stack.adminToken, 'free');
    other = await createTenant(stack.url, stack.adminToken, 'pro');
    endpointsPath = `/api/organizations/${tenant.organizationId}/webhook-endpoints`;
  });

  afterAll(async () => {
    await stack?.stop();
  });

  const expectError = (
    response: { status: number; body: { error?: { code: string; message: string } } },
    status: number,
    code: string,
  ) => {
    expect({ status: response.status, code: response.body.error?.code }).toEqual({ status, code });
    expect(response.body.error?.message).toEqual(expect.any(String));
  };

  it('answers 401 without a key, with a wrong key, and to an API key on admin routes', async () => {
    expectError(
      await new ApiClient(stack.url).post('/v1/events', { eventType: 'a', payload: {} }),
      401,
      'UNAUTHORIZED',
    );
    expectError(await new ApiClient(stack.url, 'hb_wrong').get(endpointsPath), 401, 'UNAUTHORIZED');
    expectError(await tenant.client.post('/api/organizations', { name: 'x' }), 401, 'UNAUTHORIZED');
    expectError(
      await new ApiClient(stack.url, 'not-the-admin-token').post('/api/organizations', {
        name: 'x',
      }),
      401,
      'UNAUTHORIZED',
    );
  });

  it('answers 400 INVALID_JSON to a body that is not JSON', async () => {
    const response = await tenant.client.request('POST', '/v1/events', undefined, {
      rawBody: '{"eventType": "a", payload: ',
    });
    expectError(response, 400, 'INVALID_JSON');
  });

  it('answers 415 to a body that is not declared as JSON', async () => {
    const response = await tenant.client.request('POST', '/v1/events', undefined, {
      rawBody: 'eventType=a',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expectError(response, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('answers 400 VALIDATION_FAILED naming each missing or mistyped field', async () => {
    const missing = await tenant.client.post('/v1/events', { payload: {} });
    expectError(missing, 400, 'VALIDATION_FAILED');
    expect(missing.body.error.details.issues).toEqual([
      expect.objectContaining({ path: 'eventType' }),
    ]);

    const mistyped = await tenant.client.post('/v1/events', {
      eventType: 7,
      payload: 'x',
      endpointIds: 'ep',
    });
    expectError(mistyped, 400, 'VALIDATION_FAILED');
    expect(mistyped.body.error.details.issues.map((i: { path: string }) => i.path).sort()).toEqual([
      'endpointIds',
      'eventType',
      'payload',
    ]);

    expectError(await tenant.client.post(endpointsPath, { url: 42 }), 400, 'VALIDATION_FAILED');
    expectError(
      await tenant.client.post(endpointsPath, { url: 'https://example.com', surprise: 1 }),
      400,
      'VALIDATION_FAILED',
    );
    expectError(
      await tenant.client.get(`/api/organizations/${tenant.organizationId}/messages?limit=0`),
      400,
      'VALIDATION_FAILED',
    );
    expectError(
      await tenant.client.get(`/api/organizations/${tenant.organizationId}/messages?status=lost`),
      400,
      'VALIDATION_FAILED',
    );
    expectError(
      await tenant.client.post(endpointsPath, {
        url: 'https://example.com',
        retry: { delaysMs: [], maxAgeMs: 1 },
      }),
      400,
      'VALIDATION_FAILED',
    );
    expectError(
      await admin.post('/api/organizations', { name: 'x', plan: 'platinum' }),
      400,
      'VALIDATION_FAILED',
    );
  });

  it('answers 400 to text PostgreSQL cannot store, on any route and in any part', async () => {
    expectError(
      await admin.post('/api/organizations', { name: 'a\u0000b' }),
      400,
      'VALIDATION_FAILED',
    );
    expectError(
      await tenant.client.post(endpointsPath, {
        url: 'https://example.com',
        description: '\uDE00',
      }),
      400,
      'VALIDATION_FAILED',
    );
    expectError(
      await tenant.client.get(
        `/api/organizations/${tenant.organizationId}/messages?endpointId=a%00b`,
      ),
      400,
      'VALIDATION_FAILED',
    );
    expectError(await tenant.client.get(`${endpointsPath}/ep%00x`), 400, 'VALIDATION_FAILED');
  });

  it('answers 413 PAYLOAD_TOO_LARGE to a body over the limit', async () => {
    const response = await tenant.client.post('/v1/events', {
      eventType: 'big',
      payload: { blob: 'x'.repeat(300 * 1024) },
    });
    expectError(response, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('answers 404 to unknown ids and to another organization’s ids, never with their data', async () => {
    const missingEndpoint = `${endpointsPath}/ep_00000000000000000000000000`;
    expectError(await tenant.client.get(missingEndpoint), 404, 'ENDPOINT_NOT_FOUND');
    expectError(
      await tenant.client.get(`/api/organizations/${tenant.organizationId}/messages/msg_nope`),
      404,
      'MESSAGE_NOT_FOUND',
    );
    expectError(
      await tenant.client.get(`/api/organizations/${tenant.organizationId}/events/evt_nope`),
      404,
      'EVENT_NOT_FOUND',
    );
    expectError(
      await admin.post('/api/organizations/org_nope/api-keys'),
      404,
      'ORGANIZATION_NOT_FOUND',
    );
    expectError(await tenant.client.get('/api/nothing-here'), 404, 'ROUTE_NOT_FOUND');

    const theirs = await other.client.post(
      `/api/organizations/${other.organizationId}/webhook-endpoints`,
      {
        url: 'https://example.com/theirs',
      },
    );
    expect(theirs.status).toBe(201);
    // Their organization in the path, with our key: not found.
    const viaTheirPath = await tenant.client.get(
      `/api/organizations/${other.organizationId}/webhook-endpoints`,
    );
    expectError(viaTheirPath, 404, 'ORGANIZATION_NOT_FOUND');
    // Their endpoint id under our organization: not found either.
    const viaOurPath = await tenant.client.get(`${endpointsPath}/${theirs.body.data.id}`);
    expectError(viaOurPath, 404, 'ENDPOINT_NOT_FOUND');
    expect(JSON.stringify(viaOurPath.body)).not.toContain('example.com/theirs');
  });

  it('answers 400 VALIDATION_FAILED to an over-long or undecodable id in the path', async () => {
    const longId = `${endpointsPath}/ép_${'x'.repeat(250)}`;
    expectError(await tenant.client.patch(longId, {}), 400, 'VALIDATION_FAILED');
    expectError(await tenant.client.get(`${longId}/fifo-state`), 400, 'VALIDATION_FAILED');
    expectError(await tenant.client.get(`${endpointsPath}/ep_%E0%A4%A`), 400, 'VALIDATION_FAILED');
  });

  it('refuses hostile and malformed endpoint URLs', async () => {
    for (const url of [
      'http://127.0.0.1:9/x',
      'http://localhost/x',
      'http://[::1]/x',
      'http://169.254.169.254/latest',
      'http://0x7f000001/',
      'http://10.1.2.3/',
    ]) {
      expectError(await tenant.client.post(endpointsPath, { url }), 400, 'URL_NOT_ALLOWED');
    }
    for (const url of ['ftp://example.com/x', 'not a url', 'https://user:pass@example.com/x']) {
      expectError(await tenant.client.post(endpointsPath, { url }), 400, 'INVALID_URL');
    }
    expectError(await tenant.client.post(endpointsPath, {}), 400, 'VALIDATION_FAILED');
    expectError(
      await tenant.client.post(endpointsPath, {
        url: 'https://example.com',
        secret: 'whsec_short',
      }),
      400,
      'INVALID_SECRET',
    );
  });

  it('gates FIFO ordering by plan and kind', async () => {
    expectError(
      await tenant.client.post(endpointsPath, { url: 'https://example.com', fifoEnabled: true }),
      403,
      'PLAN_REQUIRED',
    );
    const proEndpoints = `/api/organizations/${other.organizationId}/webhook-endpoints`;
    const pro = await other.client.post(proEndpoints, {
      url: 'https://example.com',
      fifoEnabled: true,
    });
    expect(pro.status).toBe(201);
    expect(pro.body.data.fifoEnabled).toBe(true);
    expectError(
      await other.client.post(proEndpoints, { kind: 'polling', fifoEnabled: true }),
      400,
      'FIFO_NOT_SUPPORTED',
    );
    // A cloud kind without its config names what is missing.
    const sqs = await other.client.post(proEndpoints, { kind: 'sqs' });
    expectError(sqs, 400, 'VALIDATION_FAILED');
    expect(sqs.body.error.message).toContain('config');
  });

  it('keeps idempotency: same key returns the original, another payload conflicts', async () => {
    const first = await tenant.client.post('/v1/events', {
      eventType: 'a.b',
      payload: { x: 1, y: 2 },
      idempotencyKey: 'k-1',
    });
    expect(first.status).toBe(202);
    expect(first.body.data.duplicate).toBe(false);
    const again = await tenant.client.post('/v1/events', {
      eventType: 'a.b',
      payload: { y: 2, x: 1 },
      idempotencyKey: 'k-1',
    });
    expect(again.status).toBe(202);
    expect(again.body.data).toEqual({ ...first.body.data, duplicate: true });
    expectError(
      await tenant.client.post('/v1/events', {
        eventType: 'a.b',
        payload: { x: 2 },
        idempotencyKey: 'k-1',
      }),
      409,
      'IDEMPOTENCY_CONFLICT',
    );
    expectError(
      await tenant.client.post('/v1/events', {
        eventType: 'a.c',
        payload: { x: 1, y: 2 },
        idempotencyKey: 'k-1',
      }),
      409,
      'IDEMPOTENCY_CONFLICT',
    );
    // Another organization may use the same key for its own event.
    const theirs = await other.client.post('/v1/events', {
      eventType: 'a.b',
      payload: { x: 1, y: 2 },
      idempotencyKey: 'k-1',
    });
    expect(theirs.body.data.duplicate).toBe(false);
    expect(theirs.body.data.id).not.toBe(first.body.data.id);
  });

  it('answers a batch with one result per event, in order, a bad one failing alone', async () => {
    const response = await tenant.client.post('/v1/events/batch', {
      events: [
        { eventType: 'a', payload: {} },
        { eventType: 'bad type', payload: {} },
        { eventType: 'c', payload: { n: 3 } },
      ],
    });
    expect(response.status).toBe(207);
    expect(response.body.data.map((r: { status: number }) => r.status)).toEqual([202, 400, 202]);
    expect(response.body.data[1].error.code).toBe('VALIDATION_FAILED');
    expect(response.body.data[2].data.eventType).toBe('c');
    expectError(
      await tenant.client.post('/v1/events/batch', { events: [] }),
      400,
      'VALIDATION_FAILED',
    );
  });
});

describe('bad input loses nothing already accepted', () => {
  it('still delivers events accepted before and after a burst of bad requests', async () => {
    const stack = await startStack();
    const receiver = new TestReceiver();
    const receiverUrl = await receiver.start();
    try {
      const { organizationId, client } = await createTenant(stack.url, stack.adminToken);
      await client.post(`/api/organizations/${organizationId}/webhook-endpoints`, {
        url: receiverUrl,
      });
      expect((await client.post('/v1/events', { eventType: 'before', payload: {} })).status).toBe(
        202,
      );
      const bad = await Promise.all([
        client.request('POST', '/v1/events', undefined, { rawBody: '{' }),
        client.post('/v1/events', { eventType: 'x'.repeat(300), payload: {} }),
        client.post('/v1/events', { eventType: 'big', payload: { b: 'x'.repeat(400 * 1024) } }),
        client.post('/v1/events', null),
        // Text PostgreSQL cannot store: refused at the door, never left to stall the fan-out.
        client.post('/v1/events', { eventType: 'nul', payload: { t: 'a\u0000' } }),
        client.post('/v1/events', { eventType: 'half', payload: { t: '\uD83D' } }),
      ]);
      expect(bad.map((r) => r.status)).toEqual([400, 400, 413, 400, 400, 400]);
      expect((await client.post('/v1/events', { eventType: 'after', payload: {} })).status).toBe(
        202,
      );
      await pollUntil(() => receiver.requests.length >= 2, {
        description: 'both good events delivered',
      });
      expect(receiver.requests.map((r) => r.headers['hookbase-event-type']).sort()).toEqual([
        'after',
        'before',
      ]);
      const health = await new ApiClient(stack.url).get('/health');
      expect(health.body).toEqual({ data: { status: 'ok' } });
    } finally {
      await receiver.stop();
      await stack.stop();
    }
  });
});
