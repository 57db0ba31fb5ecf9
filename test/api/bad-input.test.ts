import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
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

  it('answers every body the parser refuses in the coded format, JSON and never sniffed', async () => {
    const cases: [
      string,
      { rawBody?: string; headers?: Record<string, string> },
      number,
      string,
    ][] = [
      ['malformed JSON', { rawBody: '{"eventType": ' }, 400, 'INVALID_JSON'],
      ['an empty JSON body', { rawBody: '' }, 400, 'INVALID_JSON'],
      [
        'an empty body declared JSON',
        { headers: { 'content-type': 'application/json' } },
        400,
        'INVALID_JSON',
      ],
      [
        'a text body',
        { rawBody: 'hello', headers: { 'content-type': 'text/plain' } },
        415,
        'UNSUPPORTED_MEDIA_TYPE',
      ],
      [
        'JSON under another type',
        { rawBody: '{}', headers: { 'content-type': 'application/xml' } },
        415,
        'UNSUPPORTED_MEDIA_TYPE',
      ],
      [
        'a __proto__ key',
        { rawBody: '{"eventType":"a","payload":{"__proto__":{"x":1}}}' },
        400,
        'INVALID_JSON',
      ],
      [
        'a constructor.prototype key',
        { rawBody: '{"eventType":"a","payload":{"constructor":{"prototype":{"x":1}}}}' },
        400,
        'INVALID_JSON',
      ],
    ];
    for (const [what, init, status, code] of cases) {
      const headers = { 'content-type': 'application/json', ...init.headers };
      const response = await tenant.client.request('POST', '/v1/events', undefined, {
        ...init,
        headers,
      });
      expect({ what, status: response.status, code: response.body?.error?.code }).toEqual({
        what,
        status,
        code,
      });
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });

  it('answers 400 VALIDATION_FAILED to JSON nested beyond 64 levels, with or without an idempotency key', async () => {
    const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
    const event = (payload: string, key?: string) =>
      `{"eventType":"deep",${key ? `"idempotencyKey":"${key}",` : ''}"payload":{"a":${payload}}}`;
    // The body's own object and payload are two levels: 62 more arrays is the most it can hold.
    const deepest = await tenant.client.request('POST', '/v1/events', undefined, {
      rawBody: event(nested(62)),
    });
    expect(deepest.status).toBe(202);
    for (const [depth, key] of [
      [63, undefined],
      [5_000, undefined],
      [25_000, 'deep-key-1'],
      [100_000, 'deep-key-2'],
    ] as const) {
      const response = await tenant.client.request('POST', '/v1/events', undefined, {
        rawBody: event(nested(depth), key),
      });
      expect({ depth, status: response.status, code: response.body.error?.code }).toEqual({
        depth,
        status: 400,
        code: 'VALIDATION_FAILED',
      });
      expect(response.body.error.message).toContain('nested deeper than 64 levels');
    }
    // Management routes take JSON through the same parser.
    const endpoint = await tenant.client.request('POST', endpointsPath, undefined, {
      rawBody: `{"url":"https://example.com/h","metadata":${nested(100)}}`,
    });
    expectError(endpoint, 400, 'VALIDATION_FAILED');
  });

  it('answers 400 VALIDATION_FAILED to numbers JSON.parse would change: unsafe integers, overflow', async () => {
    for (const number of ['12345678901234567891', '-9007199254740993', '1e400']) {
      const response = await tenant.client.request('POST', '/v1/events', undefined, {
        rawBody: `{"eventType":"numbers","payload":{"n":${number}}}`,
      });
      expectError(response, 400, 'VALIDATION_FAILED');
      expect(response.body.error.message).toContain('send it as a string');
    }
    for (const number of ['9007199254740991', '1.5e300', '-0.25']) {
      const response = await tenant.client.request('POST', '/v1/events', undefined, {
        rawBody: `{"eventType":"numbers","payload":{"n":${number}}}`,
      });
      expect({ number, status: response.status }).toEqual({ number, status: 202 });
    }
  });

  it('answers 431 HEADERS_TOO_LARGE to headers over the limit, and 400 to an unreadable request, in the coded format', async () => {
    const url = new URL(stack.url);
    const answer = await new Promise<{
      status: number;
      headers: Record<string, unknown>;
      body: string;
    }>((resolve, reject) => {
      const request = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          path: '/v1/events',
          method: 'GET',
          headers: { 'x-filler': 'x'.repeat(64 * 1024) },
        },
        (response) => {
          let body = '';
          response.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
          response.on('end', () =>
            resolve({ status: response.statusCode ?? 0, headers: response.headers, body }),
          );
        },
      );
      request.on('error', reject);
      request.end();
    });
    expect(answer.status).toBe(431);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
    expect(JSON.parse(answer.body)).toEqual({
      error: { code: 'HEADERS_TOO_LARGE', message: expect.any(String) },
    });
    // A request the HTTP parser cannot read at all is answered in the same format.
    const malformed = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(url.port), url.hostname, () =>
        socket.write('NOT AN HTTP REQUEST\r\n\r\n'),
      );
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });
    const [head, body] = malformed.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(head.toLowerCase()).toContain('x-content-type-options: nosniff');
    expect(JSON.parse(body)).toEqual({
      error: { code: 'VALIDATION_FAILED', message: 'Malformed HTTP request' },
    });
  });

  it('sends nosniff on every response, and no-store on a new API key', async () => {
    const responses = [
      await new ApiClient(stack.url).get('/health'),
      await new ApiClient(stack.url).get('/no/such/route'),
      await tenant.client.get(endpointsPath),
      await new ApiClient(stack.url).post('/v1/events', {}),
    ];
    for (const response of responses) {
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    }
    const key = await admin.post(`/api/organizations/${tenant.organizationId}/api-keys`);
    expect(key.status).toBe(201);
    // (Signing secrets, shown and rotated, are checked in test/security/sealed-secrets.test.ts.)
    expect(key.body.data.key).toEqual(expect.any(String));
    expect(key.headers.get('cache-control')).toBe('no-store');
    expect(key.headers.get('x-content-type-options')).toBe('nosniff');
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
