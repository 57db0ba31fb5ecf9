import { Metadata, ServiceError, status } from '@grpc/grpc-js';
import { randomBytes } from 'node:crypto';
import {
  ApiClient,
  ApiResponse,
  connectGrpcIngest,
  createTenant,
  GrpcIngestClient,
  RunningStack,
  startStack,
} from '@hookbase/testing';

/* eslint-disable @typescript-eslint/no-explicit-any -- responses are read loosely, asserted by value */

const FAILURES_PER_MINUTE = 10;

/**
 * Abuse limits against the running process, with small limits so they show quickly: events per
 * API key and second by plan (REST and gRPC), management requests per key by plan, endpoints per
 * organization by plan, bearer strings that cannot be keys, and failed authentications per client
 * address. Every refusal is 429 RATE_LIMITED with Retry-After (gRPC: RESOURCE_EXHAUSTED with a
 * `retry-after` trailer). The failed-authentication test is last: it blocks this address.
 */
describe('abuse limits', () => {
  let stack: RunningStack;
  let client: GrpcIngestClient;

  beforeAll(async () => {
    stack = await startStack({
      HOOKBASE_GRPC_PORT: '0',
      HOOKBASE_AUTH_FAILURES_PER_MINUTE: String(FAILURES_PER_MINUTE),
      HOOKBASE_MAX_BATCH_EVENTS: '10',
      HOOKBASE_INGEST_EVENTS_PER_SECOND_FREE: '10',
      HOOKBASE_API_REQUESTS_PER_SECOND_BUSINESS: '5',
      HOOKBASE_MAX_ENDPOINTS_FREE: '2',
    });
    client = await connectGrpcIngest(stack.process);
  });

  afterAll(async () => {
    client?.close();
    await stack?.stop();
  });

  const expectRateLimited = (response: ApiResponse, limit: string) => {
    expect({ status: response.status, code: response.body.error?.code }).toEqual({
      status: 429,
      code: 'RATE_LIMITED',
    });
    expect(response.body.error.details).toMatchObject({ limit });
    const retryAfter = Number(response.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(response.body.error.details.retryAfterSeconds).toBe(retryAfter);
  };
  const batch = (n: number) => ({
    events: Array.from({ length: n }, (_, i) => ({ eventType: 'limit.test', payload: { i } })),
  });

  type Outcome = { value?: any; error?: ServiceError };
  const publish = (method: 'Publish' | 'PublishBatch', request: unknown, authorization: string) =>
    new Promise<Outcome>((resolve) => {
      const metadata = new Metadata();
      metadata.set('authorization', authorization);
      client[method](
        request,
        metadata,
        { deadline: Date.now() + 20_000 },
        (error: ServiceError | null, value: any) => resolve(error ? { error } : { value }),
      );
    });

  /** Runs `step` until it answers 429 (each try starts with a full batch), at most 10 times. */
  async function untilRefused<T>(step: () => Promise<{ refused: boolean; value: T }>): Promise<T> {
    for (let attempt = 0; attempt < 10; attempt++) {
      const { refused, value } = await step();
      if (refused) return value;
    }
    throw new Error('never refused in 10 tries');
  }

  it('limits events per API key and second on REST, per plan, and counts a batch whole', async () => {
    const free = await createTenant(stack.url, stack.adminToken, 'free');
    const refusal = await untilRefused(async () => {
      const full = await free.client.post('/v1/events/batch', batch(10));
      expect(full.status).toBe(207);
      const next = await free.client.post('/v1/events', { eventType: 'limit.test', payload: {} });
      return { refused: next.status === 429, value: next };
    });
    expectRateLimited(refusal, 'ingest');
    expect(refusal.body.error.message).toMatch(/10 events per second on plan free/);
    // A pro key on the same process has its plan's (default) limit.
    const pro = await createTenant(stack.url, stack.adminToken, 'pro');
    for (let i = 0; i < 3; i++) {
      expect((await pro.client.post('/v1/events/batch', batch(10))).status).toBe(207);
    }
  });

  it('limits events per API key on gRPC with RESOURCE_EXHAUSTED and a retry-after trailer', async () => {
    const free = await createTenant(stack.url, stack.adminToken, 'free');
    const events = Array.from({ length: 10 }, () => ({
      event_type: 'limit.grpc',
      payload_json: '{}',
    }));
    const error = await untilRefused(async () => {
      const full = await publish('PublishBatch', { events }, `Bearer ${free.apiKey}`);
      expect(full.error).toBeUndefined();
      const next = await publish(
        'Publish',
        { event_type: 'limit.grpc', payload_json: '{}' },
        `Bearer ${free.apiKey}`,
      );
      return { refused: next.error?.code === status.RESOURCE_EXHAUSTED, value: next.error };
    });
    expect(error?.metadata.get('hookbase-error-code')).toEqual(['RATE_LIMITED']);
    expect(Number(error?.metadata.get('retry-after')[0])).toBeGreaterThanOrEqual(1);
  });

  it('limits management requests per API key by plan', async () => {
    const business = await createTenant(stack.url, stack.adminToken, 'business');
    const free = await createTenant(stack.url, stack.adminToken, 'free');
    const org = (tenant: { organizationId: string }) =>
      `/api/organizations/${tenant.organizationId}`;
    const burst = (tenant: typeof free) =>
      Promise.all(
        Array.from({ length: 12 }, () => tenant.client.get(`${org(tenant)}/webhook-endpoints`)),
      );
    const limited = await burst(business);
    const refused = limited.filter((response) => response.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    expect(limited.filter((response) => response.status === 200).length).toBeLessThanOrEqual(10);
    expectRateLimited(refused[0], 'management');
    // The free plan here keeps its default of 100 per second.
    expect((await burst(free)).map((response) => response.status)).toEqual(Array(12).fill(200));
  });

  it('caps endpoints per organization by plan with 403 ENDPOINT_LIMIT_REACHED', async () => {
    const free = await createTenant(stack.url, stack.adminToken, 'free');
    const path = `/api/organizations/${free.organizationId}/webhook-endpoints`;
    const first = await free.client.post(path, { kind: 'polling' });
    expect(first.status).toBe(201);
    expect((await free.client.post(path, { kind: 'polling' })).status).toBe(201);
    const third = await free.client.post(path, { kind: 'polling' });
    expect({ status: third.status, code: third.body.error?.code }).toEqual({
      status: 403,
      code: 'ENDPOINT_LIMIT_REACHED',
    });
    expect(third.body.error.details).toEqual({ limit: 2 });
    expect((await free.client.delete(`${path}/${first.body.data.id}`)).status).toBe(200);
    expect((await free.client.post(path, { kind: 'polling' })).status).toBe(201);
    // The cap is the organization's: a pro organization has its own, larger one.
    const pro = await createTenant(stack.url, stack.adminToken, 'pro');
    const proPath = `/api/organizations/${pro.organizationId}/webhook-endpoints`;
    for (let i = 0; i < 3; i++)
      expect((await pro.client.post(proPath, { kind: 'polling' })).status).toBe(201);
  });

  it('refuses bearer strings that cannot be keys: over-long ones on REST and gRPC', async () => {
    const tenant = await createTenant(stack.url, stack.adminToken, 'pro');
    const path = `/api/organizations/${tenant.organizationId}`;
    const long = await new ApiClient(stack.url, `hb_${'A'.repeat(10_000)}`).get(path);
    expect({ status: long.status, code: long.body.error?.code }).toEqual({
      status: 401,
      code: 'UNAUTHORIZED',
    });
    expect(long.body.error.message).toMatch(/longer than any key or token/);
    const grpc = await publish(
      'Publish',
      { event_type: 'limit.long', payload_json: '{}' },
      `Bearer hb_${'A'.repeat(60_000)}`,
    );
    expect(grpc.error?.code).toBe(status.UNAUTHENTICATED);
    expect(grpc.error?.metadata.get('hookbase-error-code')).toEqual(['UNAUTHORIZED']);
  });

  it('answers 429 with Retry-After to an address that failed too often; a valid key still works', async () => {
    const tenant = await createTenant(stack.url, stack.adminToken, 'pro');
    const path = `/api/organizations/${tenant.organizationId}`;
    expect((await tenant.client.get(path)).status).toBe(200);
    const statuses: number[] = [];
    let refused: ApiResponse | undefined;
    for (let i = 0; i <= FAILURES_PER_MINUTE && !refused; i++) {
      const response = await new ApiClient(
        stack.url,
        `hb_${randomBytes(32).toString('base64url')}`,
      ).get(path);
      statuses.push(response.status);
      if (response.status === 429) refused = response;
    }
    // Earlier tests of this file failed twice (the over-long bearers), so fewer 401s remain.
    expect(statuses.slice(0, -1).every((code) => code === 401)).toBe(true);
    expect(statuses.length).toBeLessThanOrEqual(FAILURES_PER_MINUTE + 1);
    expect(refused).toBeDefined();
    expectRateLimited(refused!, 'auth_failures');
    expect(Number(refused!.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    // Further tries are refused the same way, the admin token and a key already checked still work.
    expect((await new ApiClient(stack.url, 'hb_wrong').get(path)).status).toBe(429);
    expect(
      (await new ApiClient(stack.url, stack.adminToken).post('/api/organizations', { name: 'x' }))
        .status,
    ).toBe(201);
    expect((await tenant.client.get(path)).status).toBe(200);
  });
});
