/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are read loosely, asserted by value */
import {
  ApiClient,
  createTenant,
  pollUntil,
  RunningStack,
  startStack,
  TestReceiver,
} from '@hookbase/testing';

/**
 * Endpoint health and auto-disable against the real stack: the failure streak in endpoint bodies,
 * an endpoint failing for its organization's period disabled with reason `failing`, enabling it
 * clearing the reason, manual disable, and a FIFO endpoint's queue held while disabled then
 * delivered in order on enable.
 */
describe('endpoint health and auto-disable', () => {
  const receiver = new TestReceiver();
  let receiverUrl: string;
  let stack: RunningStack;
  let client: ApiClient;
  let org: string;
  let healthy = false;
  // Every attempt waits about 300 ms for the next: a streak lasts long enough to pass the period.
  const retry = { delaysMs: [0, ...Array.from({ length: 19 }, () => 300)], maxAgeMs: 600_000 };

  beforeAll(async () => {
    receiverUrl = await receiver.start();
    receiver.respondWith(() => (healthy ? { status: 200 } : { status: 503, body: 'down' }));
    stack = await startStack({ HOOKBASE_RETRY_POLL_MS: '100' });
    const tenant = await createTenant(stack.url, stack.adminToken, 'pro');
    client = tenant.client;
    org = `/api/organizations/${tenant.organizationId}`;
    const admin = new ApiClient(stack.url, stack.adminToken);
    const patched = await admin.patch(org, { autoDisableAfterMs: 1_500 });
    expect(patched.status).toBe(200);
    expect(patched.body.data.autoDisableAfterMs).toBe(1_500);
  });

  afterAll(async () => {
    await stack?.stop();
    await receiver.stop();
  });

  const endpointOf = async (id: string) =>
    (await client.get(`${org}/webhook-endpoints/${id}`)).body.data as Record<string, any>;

  it('tracks the streak, disables a failing endpoint with its reason, and clears it on enable', async () => {
    healthy = false;
    const created = await client.post(`${org}/webhook-endpoints`, {
      url: `${receiverUrl}/failing`,
      retry,
    });
    expect(created.status).toBe(201);
    const id: string = created.body.data.id;
    expect(created.body.data).toMatchObject({
      disabledReason: null,
      disabledAt: null,
      health: { failingSince: null, consecutiveFailures: 0, lastSuccessAt: null },
    });
    const published = await client.post('/v1/events', {
      eventType: 'health.test',
      payload: {},
      endpointIds: [id],
    });
    expect(published.status).toBe(202);
    const streaking = await pollUntil(
      async () => {
        const endpoint = await endpointOf(id);
        return endpoint.health.consecutiveFailures >= 2 && endpoint;
      },
      { description: 'a streak of two failures' },
    );
    expect(streaking.status).toBe('active');
    expect(Date.parse(streaking.health.failingSince)).toBeLessThanOrEqual(Date.now());
    const disabled = await pollUntil(
      async () => {
        const endpoint = await endpointOf(id);
        return endpoint.status === 'disabled' && endpoint;
      },
      { description: 'the endpoint disabled', timeoutMs: 30_000 },
    );
    expect(disabled.disabledReason).toBe('failing');
    expect(
      Date.parse(disabled.disabledAt) - Date.parse(disabled.health.failingSince),
    ).toBeGreaterThanOrEqual(1_500);

    healthy = true;
    const enabled = await client.patch(`${org}/webhook-endpoints/${id}`, { status: 'active' });
    expect(enabled.status).toBe(200);
    expect(enabled.body.data).toMatchObject({
      status: 'active',
      disabledReason: null,
      disabledAt: null,
      health: { failingSince: null, consecutiveFailures: 0 },
    });
    // The held message goes out, and the success is recorded.
    const recovered = await pollUntil(
      async () => {
        const endpoint = await endpointOf(id);
        return endpoint.health.lastSuccessAt !== null && endpoint;
      },
      { description: 'the last success recorded' },
    );
    expect(recovered.health).toMatchObject({ failingSince: null, consecutiveFailures: 0 });

    const manual = await client.patch(`${org}/webhook-endpoints/${id}`, { status: 'disabled' });
    expect(manual.body.data).toMatchObject({ status: 'disabled', disabledReason: 'manual' });
    expect(manual.body.data.disabledAt).not.toBeNull();
  });

  it("holds a disabled FIFO endpoint's queue and delivers it in order on enable", async () => {
    healthy = false;
    const created = await client.post(`${org}/webhook-endpoints`, {
      url: `${receiverUrl}/fifo`,
      fifoEnabled: true,
      retry,
    });
    expect(created.status).toBe(201);
    const id: string = created.body.data.id;
    for (let n = 0; n < 4; n += 1) {
      const published = await client.post('/v1/events', {
        eventType: 'health.fifo',
        payload: { n },
        endpointIds: [id],
      });
      expect(published.status).toBe(202);
    }
    await pollUntil(async () => (await endpointOf(id)).disabledReason === 'failing', {
      description: 'the FIFO endpoint disabled for failing',
      timeoutMs: 30_000,
    });
    const state = await pollUntil(
      async () => {
        const fifo = (await client.get(`${org}/webhook-endpoints/${id}/fifo-state`)).body.data;
        return fifo?.blockedReason === 'disabled' && fifo;
      },
      { description: 'the FIFO queue held as disabled' },
    );
    expect(state.queueDepth).toBe(4);
    healthy = true;
    const seenBefore = receiver.requests.filter((r) => r.path === '/fifo').length;
    expect(
      (await client.patch(`${org}/webhook-endpoints/${id}`, { status: 'active' })).status,
    ).toBe(200);
    const delivered = await pollUntil(
      () => {
        const ok = receiver.requests
          .filter((r) => r.path === '/fifo')
          .slice(seenBefore)
          .map((r) => JSON.parse(r.body).n as number);
        return ok.length >= 4 && ok;
      },
      { description: 'the four messages delivered after enable' },
    );
    // The head may be sent again once (its lease), never out of order.
    expect([...new Set(delivered)]).toEqual([0, 1, 2, 3]);
    expect(delivered).toEqual([...delivered].sort((a, b) => a - b));
  });
});
