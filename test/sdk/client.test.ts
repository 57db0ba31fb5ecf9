import { Hookbase, HookbaseApiError, HookbaseConnectionError } from '@hookbase/sdk';
import { createTenant, pollUntil, RunningStack, startStack } from '@hookbase/testing';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';

/**
 * A loopback stand-in in front of the real stack: each request is recorded, then either answered
 * as the script says (503 with Retry-After, a dropped connection) or passed on to Hookbase.
 */
class FlakyProxy {
  readonly requests: { at: number; body: string }[] = [];
  private server: Server | undefined;
  script: (index: number) => 'pass' | 'drop' | { status: number; retryAfter?: string } = () =>
    'pass';

  constructor(private readonly target: string) {}

  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const action = this.script(this.requests.push({ at: Date.now(), body }) - 1);
    if (action === 'drop') {
      req.socket.destroy();
      return;
    }
    if (action !== 'pass') {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (action.retryAfter !== undefined) headers['retry-after'] = action.retryAfter;
      res.writeHead(action.status, headers);
      res.end(JSON.stringify({ error: { code: 'UNAVAILABLE', message: 'not accepted, retry' } }));
      return;
    }
    const upstream = await fetch(`${this.target}${req.url}`, {
      method: req.method,
      headers: {
        authorization: req.headers.authorization ?? '',
        'content-type': 'application/json',
      },
      body: body || undefined,
    });
    res.writeHead(upstream.status, { 'content-type': 'application/json' });
    res.end(await upstream.text());
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

describe('@hookbase/sdk client against the real stack', () => {
  let stack: RunningStack;
  let tenant: Awaited<ReturnType<typeof createTenant>>;
  let hookbase: Hookbase;
  const proxy = () => new FlakyProxy(stack.url);
  let flaky: FlakyProxy;
  let flakyUrl: string;

  beforeAll(async () => {
    stack = await startStack();
    tenant = await createTenant(stack.url, stack.adminToken, 'pro');
    hookbase = new Hookbase({
      baseUrl: stack.url,
      apiKey: tenant.apiKey,
      organizationId: tenant.organizationId,
    });
    flaky = proxy();
    flakyUrl = await flaky.start();
  });

  afterAll(async () => {
    await flaky?.stop();
    await stack?.stop();
  });

  beforeEach(() => {
    flaky.requests.length = 0;
    flaky.script = () => 'pass';
  });

  it('publishes with a generated idempotency key; the same key answers the first result', async () => {
    const first = await hookbase.publish({ eventType: 'sdk.test', payload: { n: 1 } });
    expect(first).toMatchObject({ eventType: 'sdk.test', duplicate: false });
    expect(first.id).toMatch(/^evt_/);
    expect(first.idempotencyKey).toBeTruthy();
    const again = await hookbase.publish({
      eventType: 'sdk.test',
      payload: { n: 1 },
      idempotencyKey: first.idempotencyKey,
    });
    expect(again).toMatchObject({ id: first.id, duplicate: true });
    // Accepted means on Kafka; the fan-out records the event a moment later (404 until then).
    const event = await pollUntil(() => hookbase.getEvent(first.id), {
      description: `event ${first.id} recorded by the fan-out`,
    });
    expect(event).toMatchObject({ id: first.id, payload: { n: 1 } });
  });

  it('surfaces API errors as HookbaseApiError with status, code, message and details', async () => {
    const rejected = await hookbase
      .publish({ eventType: 'bad type!', payload: {} })
      .catch((error: unknown) => error);
    expect(rejected).toBeInstanceOf(HookbaseApiError);
    expect(rejected).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
    expect((rejected as HookbaseApiError).details).toBeDefined();

    const missing = await hookbase.getEndpoint('ep_00000000000000000000000000').catch((e) => e);
    expect(missing).toMatchObject({ status: 404, code: 'ENDPOINT_NOT_FOUND' });

    const conflict = await hookbase
      .publish({ eventType: 'sdk.other', payload: { n: 2 }, idempotencyKey: 'conflict-key' })
      .then(() =>
        hookbase.publish({
          eventType: 'sdk.other',
          payload: { n: 3 },
          idempotencyKey: 'conflict-key',
        }),
      )
      .catch((e) => e);
    expect(conflict).toMatchObject({ status: 409, code: 'IDEMPOTENCY_CONFLICT' });

    const stranger = new Hookbase({
      baseUrl: stack.url,
      apiKey: 'nope',
      organizationId: tenant.organizationId,
    });
    await expect(stranger.listEndpoints()).rejects.toMatchObject({
      status: 401,
      code: 'UNAUTHORIZED',
    });
  });

  it('manages endpoints through the typed methods and the raw typed API', async () => {
    const created = (await hookbase.createEndpoint({
      kind: 'http',
      url: 'http://127.0.0.1:9/hooks',
      eventTypes: ['a.b'],
    })) as { id: string; status: string };
    expect(created.status).toBe('active');
    const updated = (await hookbase.updateEndpoint(created.id, { status: 'paused' })) as {
      status: string;
    };
    expect(updated.status).toBe('paused');
    expect(await hookbase.getEndpointSecret(created.id)).toMatch(/^whsec_/);
    const raw = await hookbase.api.GET(
      '/api/organizations/{orgId}/webhook-endpoints/{endpointId}',
      {
        params: { path: { orgId: tenant.organizationId, endpointId: created.id } },
      },
    );
    expect(raw.response.status).toBe(200);
    await hookbase.deleteEndpoint(created.id);
    await expect(hookbase.getEndpoint(created.id)).rejects.toMatchObject({ status: 404 });
  });

  it('reads and recovers an application: its events, its statistics, replay-failed across it', async () => {
    const app = (await hookbase.createApplication({ name: 'SDK', uid: 'sdk-cust' })) as {
      id: string;
    };
    const published = await hookbase.publish({
      eventType: 'sdk.app',
      payload: { n: 1 },
      applicationId: 'sdk-cust',
    });
    const events = await pollUntil(
      async () => {
        const page = await hookbase.listEvents({ applicationId: 'sdk-cust' });
        return page.data.length > 0 ? page : undefined;
      },
      { description: "the application's event listed" },
    );
    expect(events.data).toEqual([
      expect.objectContaining({ id: published.id, applicationId: app.id, eventType: 'sdk.app' }),
    ]);
    expect(events.nextCursor).toBeNull();
    expect(await hookbase.getApplicationStats('sdk-cust')).toMatchObject({
      endpoints: 0,
      successRate: null,
    });
    expect(
      await hookbase.replayApplicationFailed(app.id, { after: `msg_${'0'.repeat(26)}` }),
    ).toEqual({
      replayed: 0,
      nextAfter: null,
    });
    await expect(hookbase.getApplicationStats('nobody')).rejects.toMatchObject({
      status: 404,
      code: 'APPLICATION_NOT_FOUND',
    });
  });

  it('retries 503 with the same idempotency key, waiting what Retry-After says', async () => {
    flaky.script = (index) => (index < 2 ? { status: 503, retryAfter: '1' } : 'pass');
    const client = new Hookbase({ baseUrl: flakyUrl, apiKey: tenant.apiKey });
    const result = await client.publish({ eventType: 'sdk.retried', payload: { n: 7 } });
    expect(flaky.requests).toHaveLength(3);
    const keys = flaky.requests.map((r) => JSON.parse(r.body).idempotencyKey);
    expect(new Set(keys)).toEqual(new Set([result.idempotencyKey]));
    // Retry-After: 1 is honoured: each retry came at least a second after the answer before it.
    expect(flaky.requests[1].at - flaky.requests[0].at).toBeGreaterThanOrEqual(950);
    expect(flaky.requests[2].at - flaky.requests[1].at).toBeGreaterThanOrEqual(950);
    expect(result.duplicate).toBe(false);
  });

  it('retries a dropped connection with the same key and Hookbase records one event', async () => {
    // The first request reaches Hookbase, but the answer is lost: the retry must not duplicate.
    let passedOnce = false;
    flaky.script = () => {
      if (!passedOnce) {
        passedOnce = true;
        return 'drop';
      }
      return 'pass';
    };
    const client = new Hookbase({ baseUrl: flakyUrl, apiKey: tenant.apiKey });
    const key = `drop-${Date.now()}`;
    const result = await client.publish({
      eventType: 'sdk.dropped',
      payload: { n: 8 },
      idempotencyKey: key,
    });
    expect(flaky.requests.length).toBe(2);
    expect(result.idempotencyKey).toBe(key);
    // Publishing the key once more directly: the same event, so only one exists.
    const direct = await hookbase.publish({
      eventType: 'sdk.dropped',
      payload: { n: 8 },
      idempotencyKey: key,
    });
    expect(direct).toMatchObject({ id: result.id, duplicate: true });
  });

  it('gives up within its bounds: attempts, and a Retry-After past the total time', async () => {
    flaky.script = () => ({ status: 503 });
    const client = new Hookbase({
      baseUrl: flakyUrl,
      apiKey: tenant.apiKey,
      retry: { maxAttempts: 3, initialDelayMs: 10 },
    });
    await expect(client.publish({ eventType: 'sdk.down', payload: {} })).rejects.toMatchObject({
      status: 503,
      code: 'UNAVAILABLE',
    });
    expect(flaky.requests).toHaveLength(3);

    flaky.requests.length = 0;
    flaky.script = () => ({ status: 503, retryAfter: '120' });
    const started = Date.now();
    await expect(client.publish({ eventType: 'sdk.down', payload: {} })).rejects.toBeInstanceOf(
      HookbaseApiError,
    );
    expect(flaky.requests).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(5_000);

    // Not retried: a client error.
    flaky.requests.length = 0;
    flaky.script = () => ({ status: 400 });
    await expect(client.publish({ eventType: 'sdk.down', payload: {} })).rejects.toMatchObject({
      status: 400,
    });
    expect(flaky.requests).toHaveLength(1);
  });

  it('reports an unreachable API as HookbaseConnectionError after its retries', async () => {
    const closed = proxy();
    const url = await closed.start();
    await closed.stop();
    const client = new Hookbase({
      baseUrl: url,
      apiKey: tenant.apiKey,
      retry: { maxAttempts: 2, initialDelayMs: 10 },
    });
    const error = await client.publish({ eventType: 'sdk.gone', payload: {} }).catch((e) => e);
    expect(error).toBeInstanceOf(HookbaseConnectionError);
    expect(error).toMatchObject({ code: 'NETWORK_ERROR' });
  });
});
