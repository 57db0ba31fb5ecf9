import { Metadata, ServiceError, status } from '@grpc/grpc-js';
import { connect } from 'node:http2';
import {
  connectGrpcIngest,
  createTenant,
  GrpcIngestClient,
  pollUntil,
  RunningStack,
  startStack,
  TestReceiver,
} from '@hookbase/testing';

/* eslint-disable @typescript-eslint/no-explicit-any -- responses are read loosely, asserted by value */

/**
 * gRPC ingest (`hookbase.v1.Ingest`) with a real @grpc/grpc-js client built from the same .proto:
 * the fields and rules of REST `POST /v1/events` and `/v1/events/batch`, errors as gRPC statuses
 * with the Hookbase code in the `hookbase-error-code` trailer.
 */
describe('gRPC ingest', () => {
  let stack: RunningStack;
  let client: GrpcIngestClient;
  const receiver = new TestReceiver();
  let receiverUrl: string;

  beforeAll(async () => {
    receiverUrl = await receiver.start();
    stack = await startStack({ HOOKBASE_GRPC_PORT: '0' });
    client = await connectGrpcIngest(stack.process);
  });

  afterAll(async () => {
    client?.close();
    await stack?.stop();
    await receiver.stop();
  });

  type Outcome = { value?: any; error?: ServiceError };
  const call = (method: 'Publish' | 'PublishBatch', request: unknown, key?: string) =>
    new Promise<Outcome>((resolve) => {
      const metadata = new Metadata();
      if (key !== undefined) metadata.set('authorization', `Bearer ${key}`);
      client[method](
        request,
        metadata,
        { deadline: Date.now() + 20_000 },
        (error: ServiceError | null, value: any) => resolve(error ? { error } : { value }),
      );
    });
  const errorCode = (error: ServiceError | undefined) =>
    error?.metadata.get('hookbase-error-code')[0];

  async function tenantWithEndpoint(path: string) {
    const tenant = await createTenant(stack.url, stack.adminToken);
    const endpoint = await tenant.client.post(
      `/api/organizations/${tenant.organizationId}/webhook-endpoints`,
      { url: `${receiverUrl}${path}` },
    );
    expect(endpoint.status).toBe(201);
    return tenant;
  }
  const deliveredTo = (path: string) => receiver.requests.filter((r) => r.path === path);

  it('Publish accepts an event and it reaches the receiver, payload as sent', async () => {
    const { apiKey, client: rest, organizationId } = await tenantWithEndpoint('/one');
    const payloadJson = '{"orderId":9007199254740991,"price":1.5,"note":"order ✓","tags":[]}';
    const { value, error } = await call(
      'Publish',
      { event_type: 'order.created', payload_json: payloadJson },
      apiKey,
    );
    expect(error).toBeUndefined();
    expect(value).toMatchObject({ event_type: 'order.created', duplicate: false });
    expect(value.id).toMatch(/^evt_/);
    expect(new Date(value.accepted_at).toISOString()).toBe(value.accepted_at);

    const [delivery] = await pollUntil(
      () => deliveredTo('/one').length > 0 && deliveredTo('/one'),
      {
        timeoutMs: 60_000,
        description: 'the gRPC event at the receiver',
      },
    );
    expect(delivery.body).toBe(payloadJson);
    expect(delivery.headers['hookbase-event-type']).toBe('order.created');
    const event = await rest.get(`/api/organizations/${organizationId}/events/${value.id}`);
    expect(event.body.data).toMatchObject({ id: value.id, payload: JSON.parse(payloadJson) });
  });

  it('PublishBatch answers one result per event, in order, and delivers the good ones', async () => {
    const { apiKey } = await tenantWithEndpoint('/batch');
    const { value, error } = await call(
      'PublishBatch',
      {
        events: [
          { event_type: 'batch.a', payload_json: '{"n":1}' },
          { event_type: 'batch.b', payload_json: '{"n":' },
          { event_type: 'batch.c', payload_json: '[1,2]' },
          // Spaced and escaped as a client may write it: delivered as the value it stands for.
          { event_type: 'batch.d', payload_json: ' { "n" : 4, "s": "\\u00e9\\"" }\n' },
        ],
      },
      apiKey,
    );
    expect(error).toBeUndefined();
    const results = value.results as any[];
    expect(results.map((r) => r.result)).toEqual(['event', 'error', 'error', 'event']);
    expect(results[0].event).toMatchObject({ event_type: 'batch.a', duplicate: false });
    expect(results[1].error.code).toBe('INVALID_JSON');
    expect(results[1].error.message).toMatch(/payload_json/);
    expect(results[2].error.code).toBe('VALIDATION_FAILED');
    expect(results[2].error.message).toMatch(/payload_json/);
    expect(results[3].event).toMatchObject({ event_type: 'batch.d', duplicate: false });

    await pollUntil(() => deliveredTo('/batch').length >= 2, {
      timeoutMs: 60_000,
      description: 'both accepted batch events at the receiver',
    });
    expect(new Set(deliveredTo('/batch').map((r) => r.body))).toEqual(
      new Set(['{"n":1}', JSON.stringify({ n: 4, s: 'é"' })]),
    );

    const empty = await call('PublishBatch', { events: [] }, apiKey);
    expect(empty.error?.code).toBe(status.INVALID_ARGUMENT);
    expect(errorCode(empty.error)).toBe('VALIDATION_FAILED');
    const tooMany = await call(
      'PublishBatch',
      { events: Array.from({ length: 501 }, () => ({ event_type: 'x', payload_json: '{}' })) },
      apiKey,
    );
    expect(tooMany.error?.code).toBe(status.INVALID_ARGUMENT);
  });

  it('repeats with an idempotency key are duplicates, across REST too; another event is a conflict', async () => {
    const { apiKey, client: rest, organizationId } = await tenantWithEndpoint('/idem');
    const request = { event_type: 'idem', payload_json: '{"a":1}', idempotency_key: 'k-1' };
    const first = await call('Publish', request, apiKey);
    expect(first.value).toMatchObject({ duplicate: false });
    const again = await call('Publish', request, apiKey);
    expect(again.value).toEqual({ ...first.value, duplicate: true });
    const overRest = await rest.post('/v1/events', {
      eventType: 'idem',
      payload: { a: 1 },
      idempotencyKey: 'k-1',
    });
    expect(overRest.body.data).toMatchObject({ id: first.value.id, duplicate: true });

    const conflict = await call('Publish', { ...request, payload_json: '{"a":2}' }, apiKey);
    expect(conflict.error?.code).toBe(status.ALREADY_EXISTS);
    expect(errorCode(conflict.error)).toBe('IDEMPOTENCY_CONFLICT');
    expect(conflict.error?.details).toMatch(/idempotency key/);
    expect(JSON.parse(String(conflict.error?.metadata.get('hookbase-error-details')[0]))).toEqual({
      eventId: first.value.id,
    });

    await pollUntil(() => deliveredTo('/idem').length > 0, {
      timeoutMs: 60_000,
      description: 'the idempotent event at the receiver',
    });
    // Nothing further is made of the duplicates. An event published after them goes through the
    // same fan-out partition (keyed by organization), so once it has its message, any record the
    // duplicates had left would have been fanned out before it.
    const after = await call('Publish', { event_type: 'idem.after', payload_json: '{}' }, apiKey);
    await pollUntil(
      async () =>
        (await rest.get(`/api/organizations/${organizationId}/events/${after.value.id}`)).body.data
          ?.messages?.length > 0,
      { timeoutMs: 60_000, description: 'the event published after the duplicates fanned out' },
    );
    const messages = await rest.get(
      `/api/organizations/${organizationId}/messages?eventType=idem&limit=100`,
    );
    expect(messages.body.data.map((m: { eventId: string }) => m.eventId)).toEqual([first.value.id]);
    expect(
      deliveredTo('/idem').filter((r) => r.headers['hookbase-event-type'] === 'idem'),
    ).toHaveLength(1);
  });

  it('refuses a call without a key or with a wrong one as UNAUTHENTICATED', async () => {
    const request = { event_type: 'auth', payload_json: '{}' };
    for (const key of [undefined, 'hb_wrong_key']) {
      for (const method of ['Publish', 'PublishBatch'] as const) {
        const { error } = await call(
          method,
          method === 'Publish' ? request : { events: [request] },
          key,
        );
        expect(error?.code).toBe(status.UNAUTHENTICATED);
        expect(errorCode(error)).toBe('UNAUTHORIZED');
      }
    }
  });

  it('refuses payload_json that is not JSON as INVALID_ARGUMENT / INVALID_JSON, and bad fields as VALIDATION_FAILED', async () => {
    const { apiKey } = await createTenant(stack.url, stack.adminToken);
    const invalid = await call('Publish', { event_type: 'x', payload_json: '{"a":' }, apiKey);
    expect(invalid.error?.code).toBe(status.INVALID_ARGUMENT);
    expect(errorCode(invalid.error)).toBe('INVALID_JSON');
    expect(invalid.error?.details).toMatch(/payload_json is not valid JSON/);

    const noType = await call('Publish', { payload_json: '{}' }, apiKey);
    expect(noType.error?.code).toBe(status.INVALID_ARGUMENT);
    expect(errorCode(noType.error)).toBe('VALIDATION_FAILED');
    expect(noType.error?.details).toMatch(/event_type/);

    const badEndpoint = await call(
      'Publish',
      { event_type: 'x', payload_json: '{}', endpoint_ids: ['nope'] },
      apiKey,
    );
    expect(errorCode(badEndpoint.error)).toBe('VALIDATION_FAILED');
  });

  it('refuses __proto__ and constructor.prototype keys in payload_json as REST does (INVALID_JSON)', async () => {
    const { apiKey } = await createTenant(stack.url, stack.adminToken);
    for (const payload_json of [
      '{"__proto__":{"admin":true}}',
      '{"a":[{"__proto__":{}}]}',
      '{"constructor":{"prototype":{"admin":true}}}',
    ]) {
      const refused = await call('Publish', { event_type: 'proto', payload_json }, apiKey);
      expect({ payload_json, grpc: refused.error?.code, code: errorCode(refused.error) }).toEqual({
        payload_json,
        grpc: status.INVALID_ARGUMENT,
        code: 'INVALID_JSON',
      });
    }
    // A key merely named "constructor" is data like any other, as over REST.
    const plain = await call(
      'Publish',
      { event_type: 'proto', payload_json: '{"constructor":"Acme"}' },
      apiKey,
    );
    expect(plain.error).toBeUndefined();
  });

  it('refuses payload_json nested beyond 64 levels or with numbers JSON.parse would change as VALIDATION_FAILED', async () => {
    const { apiKey } = await createTenant(stack.url, stack.adminToken);
    // The payload's own object is one level.
    const nested = (depth: number) => `{"a":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
    const deepest = await call('Publish', { event_type: 'deep', payload_json: nested(64) }, apiKey);
    expect(deepest.error).toBeUndefined();
    for (const [payload_json, idempotency_key] of [
      [nested(65), ''],
      [nested(5_000), ''],
      [nested(25_000), 'deep-1'],
      ['{"n":12345678901234567891}', ''],
      ['{"n":1e400}', ''],
    ]) {
      const refused = await call(
        'Publish',
        { event_type: 'deep', payload_json, idempotency_key },
        apiKey,
      );
      expect({
        start: payload_json.slice(0, 30),
        grpc: refused.error?.code,
        code: errorCode(refused.error),
      }).toEqual({
        start: payload_json.slice(0, 30),
        grpc: status.INVALID_ARGUMENT,
        code: 'VALIDATION_FAILED',
      });
      expect(refused.error?.details).toMatch(/payload_json/);
    }
  });

  it('refuses a request larger than HOOKBASE_MAX_PAYLOAD_BYTES as RESOURCE_EXHAUSTED', async () => {
    const { apiKey } = await createTenant(stack.url, stack.adminToken);
    const big = JSON.stringify({ blob: 'x'.repeat(300 * 1024) });
    const { error } = await call('Publish', { event_type: 'big', payload_json: big }, apiKey);
    expect(error?.code).toBe(status.RESOURCE_EXHAUSTED);
  });

  it('takes a whole request before a window update: HTTP/2 windows of HOOKBASE_MAX_PAYLOAD_BYTES a call, 4 MiB a connection', async () => {
    const [, address] = await stack.process.waitForLine(/gRPC listening on (\S+)/, 30_000);
    const session = connect(`http://${address}`);
    try {
      await new Promise((resolve, reject) => {
        session.once('remoteSettings', resolve);
        session.once('error', reject);
      });
      // HTTP/2's default, which a client would otherwise see, is 65,535 bytes for both.
      expect(session.remoteSettings.initialWindowSize).toBe(256 * 1024);
      await pollUntil(() => (session.state.remoteWindowSize ?? 0) >= 4 * 1024 * 1024, {
        timeoutMs: 10_000,
        description: 'the connection window raised to 4 MiB',
      });
    } finally {
      session.close();
    }
  });
});
