/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are read loosely, asserted by value */
import { createHmac } from 'node:crypto';
import { parseSecret } from '@hookbase/signing';
import {
  ApiClient,
  createTenant,
  pollUntil,
  ReceivedRequest,
  RunningStack,
  startStack,
  TestReceiver,
} from '@hookbase/testing';

/**
 * Operational webhooks against the real stack: an organization's operational endpoint receives
 * signed events about its endpoints through the pipeline (endpoint.created, failing, disabled,
 * exhausted, recovered), customer events never reach it, and an operational endpoint that itself
 * fails causes no further operational event.
 */
describe('operational webhooks', () => {
  const ops = new TestReceiver();
  const brokenOps = new TestReceiver();
  const customer = new TestReceiver();
  let stack: RunningStack;
  let client: ApiClient;
  let org: string;
  let opsSecret: string;
  let customerUrl: string;
  const failOnce = new Set<string>();
  let released = false;
  let opsId: string;
  let brokenId: string;

  beforeAll(async () => {
    const [opsUrl, brokenUrl] = await Promise.all([ops.start(), brokenOps.start()]);
    customerUrl = await customer.start();
    brokenOps.respondWith(() => ({ status: 503 }));
    customer.respondWith((request) => {
      if (request.path === '/down') return { status: 503 };
      if (request.path === '/stuck' && !released) return { status: 503 };
      if (request.path === '/gone') return { status: 410 };
      const id = String(request.headers['webhook-id']);
      if (request.path === '/flaky' && !failOnce.has(id)) {
        failOnce.add(id);
        return { status: 503 };
      }
      return { status: 200 };
    });
    stack = await startStack({
      HOOKBASE_RETRY_POLL_MS: '100',
      HOOKBASE_OPERATIONAL_FAILING_AFTER: '2',
      HOOKBASE_OPERATIONAL_FIFO_BLOCKED_AFTER: '3s',
      HOOKBASE_FIFO_BLOCKED_SWEEP_MS: '200',
      HOOKBASE_HOLD_RECHECK_MS: '300',
      // The blocked FIFO head below opens its endpoint's circuit: a short cooldown lets it through
      // soon after it is released.
      HOOKBASE_CIRCUIT_COOLDOWN_MS: '1000',
    });
    const tenant = await createTenant(stack.url, stack.adminToken);
    client = tenant.client;
    org = `/api/organizations/${tenant.organizationId}`;
    const admin = new ApiClient(stack.url, stack.adminToken);
    expect((await admin.patch(org, { autoDisableAfterMs: 1_500 })).status).toBe(200);
    const created = await client.post(`${org}/operational-webhook-endpoints`, {
      url: `${opsUrl}/ops`,
    });
    expect(created.status).toBe(201);
    opsId = created.body.data.id;
    opsSecret = (
      await client.get(`${org}/operational-webhook-endpoints/${created.body.data.id}/secret`)
    ).body.data.key;
    const broken = await client.post(`${org}/operational-webhook-endpoints`, {
      url: `${brokenUrl}/ops`,
      retry: { delaysMs: [0], maxAgeMs: 600_000 },
    });
    expect(broken.status).toBe(201);
    brokenId = broken.body.data.id;
    // Operational endpoints are not listed with the others.
    const listed = await client.get(`${org}/webhook-endpoints`);
    expect(listed.body.data).toEqual([]);
    const opsListed = await client.get(`${org}/operational-webhook-endpoints`);
    expect(opsListed.body.data).toHaveLength(2);
  });

  afterAll(async () => {
    await stack?.stop();
    await Promise.all([ops.stop(), brokenOps.stop(), customer.stop()]);
  });

  /** The operational events received, each checked against its Standard Webhooks signature. */
  const events = (): { type: string; data: any; request: ReceivedRequest }[] =>
    ops.requests.map((request) => {
      const id = String(request.headers['webhook-id']);
      const timestamp = String(request.headers['webhook-timestamp']);
      const expected = createHmac('sha256', parseSecret(opsSecret))
        .update(`${id}.${timestamp}.${request.body}`)
        .digest('base64');
      expect(String(request.headers['webhook-signature']).split(' ')).toContain(`v1,${expected}`);
      const body = JSON.parse(request.body);
      return { type: body.type, data: body.data, request };
    });
  const eventFor = (type: string, endpointId: string) =>
    pollUntil(() => events().find((e) => e.type === type && e.data.endpointId === endpointId), {
      description: `${type} for ${endpointId}`,
      timeoutMs: 30_000,
    });
  const createEndpoint = async (path: string, retry?: unknown) => {
    const created = await client.post(`${org}/webhook-endpoints`, {
      url: `${customerUrl}${path}`,
      ...(retry ? { retry } : {}),
    });
    expect(created.status).toBe(201);
    return created.body.data.id as string;
  };
  const publish = async (endpointId: string) => {
    const published = await client.post('/v1/events', {
      eventType: 'order.created',
      payload: { at: Date.now() },
      endpointIds: [endpointId],
    });
    expect(published.status).toBe(202);
  };

  it('tells of created endpoints, and never sends customer events to operational endpoints', async () => {
    const id = await createEndpoint('/ok');
    const created = await eventFor('endpoint.created', id);
    expect(created.request.headers['hookbase-event-type']).toBe('endpoint.created');
    expect(created.data).toEqual({ endpointId: id, kind: 'http' });
    // A customer cannot pass its own event off as operational: it reaches no operational endpoint.
    const forged = await client.post('/v1/events', {
      eventType: 'endpoint.disabled',
      payload: { type: 'endpoint.disabled', forged: true },
      endpointIds: [opsId],
    });
    expect(forged.status).toBe(202);
    // Published after it on the organization's partition: once this is delivered, the forged
    // event has been fanned out.
    await publish(id);
    await pollUntil(() => customer.requests.some((r) => r.path === '/ok'), {
      description: 'the customer event delivered',
    });
    expect(events().some((e) => e.type === 'order.created')).toBe(false);
    expect(ops.requests.some((r) => r.body.includes('forged'))).toBe(false);
    const patched = await client.patch(`${org}/webhook-endpoints/${id}`, { status: 'disabled' });
    expect(patched.status).toBe(200);
    expect((await eventFor('endpoint.disabled', id)).data.reason).toBe('manual');
    await client.patch(`${org}/webhook-endpoints/${id}`, { status: 'active' });
    await eventFor('endpoint.enabled', id);
    await client.delete(`${org}/webhook-endpoints/${id}`);
    await eventFor('endpoint.deleted', id);
  });

  it('tells of a failing streak once, and of the endpoint disabled for failing', async () => {
    const id = await createEndpoint('/down', {
      delaysMs: [0, ...Array.from({ length: 19 }, () => 300)],
      maxAgeMs: 600_000,
    });
    await publish(id);
    const disabled = await eventFor('endpoint.disabled', id);
    expect(disabled.data).toMatchObject({ reason: 'failing' });
    expect(disabled.data.consecutiveFailures).toBeGreaterThanOrEqual(2);
    const failing = events().filter(
      (e) => e.type === 'message.attempt.failing' && e.data.endpointId === id,
    );
    expect(failing).toHaveLength(1);
    expect(failing[0].data.consecutiveFailures).toBe(2);
  });

  it('tells of a dead-lettered message with its reason, and of a recovery', async () => {
    const gone = await createEndpoint('/gone');
    await publish(gone);
    const exhausted = await eventFor('message.attempt.exhausted', gone);
    expect(exhausted.data).toMatchObject({
      reason: 'permanent_failure',
      lastResponseStatus: 410,
      eventType: 'order.created',
    });
    // Dead-lettered without an attempt: held for a paused endpoint, which is then deleted.
    const held = await createEndpoint('/held');
    expect(
      (await client.patch(`${org}/webhook-endpoints/${held}`, { status: 'paused' })).status,
    ).toBe(200);
    await publish(held);
    await pollUntil(
      async () => (await client.get(`${org}/messages?endpointId=${held}`)).body.data?.length === 1,
      { description: 'the message held' },
    );
    expect((await client.delete(`${org}/webhook-endpoints/${held}`)).status).toBe(200);
    const cancelled = await eventFor('message.attempt.exhausted', held);
    expect(cancelled.data).toMatchObject({
      reason: 'endpoint_deleted',
      attempts: 0,
      lastError: null,
      lastResponseStatus: null,
      eventType: 'order.created',
    });
    expect(customer.requests.some((r) => r.path === '/held')).toBe(false);
    const flaky = await createEndpoint('/flaky', { delaysMs: [0, 200], maxAgeMs: 600_000 });
    await publish(flaky);
    expect(
      (await eventFor('message.attempt.recovered', flaky)).data.failures,
    ).toBeGreaterThanOrEqual(1);
  });

  it('tells once of FIFO queues held by a paused or a disabled endpoint, with two dispatchers sweeping', async () => {
    // A second process on the same database and topics: its sweep looks at the same lanes.
    await stack.startAnother();
    const pro = await createTenant(stack.url, stack.adminToken, 'pro');
    const proOrg = `/api/organizations/${pro.organizationId}`;
    const fifoOps = new TestReceiver();
    const fifoOpsUrl = await fifoOps.start();
    const held = new TestReceiver();
    const heldUrl = await held.start();
    try {
      const opsEndpoint = await pro.client.post(`${proOrg}/operational-webhook-endpoints`, {
        url: `${fifoOpsUrl}/ops`,
        eventTypes: ['fifo.queue.blocked', 'fifo.queue.unblocked'],
      });
      expect(opsEndpoint.status).toBe(201);
      const fifoEndpoint = async (path: string) => {
        const created = await pro.client.post(`${proOrg}/webhook-endpoints`, {
          url: `${heldUrl}${path}`,
          fifoEnabled: true,
        });
        expect(created.status).toBe(201);
        const id = created.body.data.id as string;
        const paused = await pro.client.patch(`${proOrg}/webhook-endpoints/${id}`, {
          status: 'paused',
        });
        expect(paused.status).toBe(200);
        for (let n = 0; n < 2; n += 1) {
          const published = await pro.client.post('/v1/events', {
            eventType: 'order.created',
            payload: { path, n },
            endpointIds: [id],
          });
          expect(published.status).toBe(202);
        }
        await pollUntil(
          async () =>
            (await pro.client.get(`${proOrg}/webhook-endpoints/${id}/fifo-state`)).body.data
              ?.queueDepth === 2,
          { description: `both messages queued for ${path}` },
        );
        return id;
      };
      const pausedId = await fifoEndpoint('/paused');
      const disabledId = await fifoEndpoint('/disabled');
      // Disabled well within the threshold of the episode that began while it was paused.
      const disabled = await pro.client.patch(`${proOrg}/webhook-endpoints/${disabledId}`, {
        status: 'disabled',
      });
      expect(disabled.status).toBe(200);
      const received = () => fifoOps.requests.map((r) => JSON.parse(r.body));
      const blockedFor = (id: string) =>
        pollUntil(
          () => received().find((e) => e.type === 'fifo.queue.blocked' && e.data.endpointId === id),
          { description: `fifo.queue.blocked for ${id}`, timeoutMs: 30_000 },
        );
      const pausedBlocked = await blockedFor(pausedId);
      expect(pausedBlocked.data.state).toMatchObject({
        blockedReason: 'paused',
        head: { eventType: 'order.created', attempts: 0 },
      });
      const disabledBlocked = await blockedFor(disabledId);
      expect(disabledBlocked.data.state.blockedReason).toBe('disabled');
      // Nothing was attempted while held.
      expect(held.requests).toEqual([]);
      // Resumed: the queue is delivered in order, and the episode ends once.
      await pro.client.patch(`${proOrg}/webhook-endpoints/${pausedId}`, { status: 'active' });
      const unblocked = await pollUntil(
        () =>
          received().find(
            (e) => e.type === 'fifo.queue.unblocked' && e.data.endpointId === pausedId,
          ),
        { description: 'fifo.queue.unblocked', timeoutMs: 30_000 },
      );
      expect(unblocked.data).toMatchObject({
        messageId: pausedBlocked.data.state.head.messageId,
        blockedSince: pausedBlocked.data.state.blockedSince,
      });
      await pollUntil(() => held.requests.length === 2, { description: 'the queue delivered' });
      expect(held.requests.map((r) => JSON.parse(r.body).n)).toEqual([0, 1]);
      // The disabled endpoint's queue is still held, and told of once.
      await pollUntil(
        async () =>
          (await pro.client.get(`${proOrg}/webhook-endpoints/${disabledId}/fifo-state`)).body.data
            ?.blockedReason === 'disabled',
        { description: 'the disabled queue held' },
      );
      const about = (id: string, type: string) =>
        received().filter((e) => e.type === type && e.data.endpointId === id);
      expect(about(pausedId, 'fifo.queue.blocked')).toHaveLength(1);
      expect(about(pausedId, 'fifo.queue.unblocked')).toHaveLength(1);
      expect(about(disabledId, 'fifo.queue.blocked')).toHaveLength(1);
      expect(about(disabledId, 'fifo.queue.unblocked')).toHaveLength(0);
    } finally {
      await Promise.all([fifoOps.stop(), held.stop()]);
    }
  });

  it('tells of a FIFO head blocked past the threshold, and of the queue moving again', async () => {
    // An organization on plan pro (FIFO), with the default auto-disable period.
    const pro = await createTenant(stack.url, stack.adminToken, 'pro');
    const proOrg = `/api/organizations/${pro.organizationId}`;
    const fifoOps = new TestReceiver();
    const fifoOpsUrl = await fifoOps.start();
    try {
      const opsEndpoint = await pro.client.post(`${proOrg}/operational-webhook-endpoints`, {
        url: `${fifoOpsUrl}/ops`,
        eventTypes: ['fifo.queue.blocked', 'fifo.queue.unblocked'],
      });
      expect(opsEndpoint.status).toBe(201);
      const created = await pro.client.post(`${proOrg}/webhook-endpoints`, {
        url: `${customerUrl}/stuck`,
        fifoEnabled: true,
        retry: { delaysMs: [0, ...Array.from({ length: 19 }, () => 300)], maxAgeMs: 600_000 },
      });
      expect(created.status).toBe(201);
      const id = created.body.data.id;
      for (let n = 0; n < 2; n += 1) {
        const published = await pro.client.post('/v1/events', {
          eventType: 'order.created',
          payload: { n },
          endpointIds: [id],
        });
        expect(published.status).toBe(202);
      }
      const types = () => fifoOps.requests.map((r) => JSON.parse(r.body));
      const blocked = await pollUntil(() => types().find((e) => e.type === 'fifo.queue.blocked'), {
        description: 'fifo.queue.blocked',
        timeoutMs: 30_000,
      });
      expect(blocked.data).toMatchObject({
        endpointId: id,
        state: { head: { eventType: 'order.created' } },
      });
      // A head that keeps failing also opens the endpoint's circuit: either holds the queue.
      expect(['retrying', 'circuit_open']).toContain(blocked.data.state.blockedReason);
      expect(blocked.data.state.head.attempts).toBeGreaterThanOrEqual(2);
      released = true;
      const unblocked = await pollUntil(
        () => types().find((e) => e.type === 'fifo.queue.unblocked'),
        // The circuit the failures opened lets the head through after its cooldown.
        { description: 'fifo.queue.unblocked', timeoutMs: 90_000 },
      );
      expect(unblocked.data).toMatchObject({
        endpointId: id,
        messageId: blocked.data.state.head.messageId,
      });
      // The filter held: nothing else reached this operational endpoint.
      expect(types().every((e) => e.type.startsWith('fifo.queue.'))).toBe(true);
      expect(types().filter((e) => e.type === 'fifo.queue.blocked')).toHaveLength(1);
    } finally {
      await fifoOps.stop();
    }
  });

  it('sends operational events through the pipeline, and a failing operational endpoint causes none', async () => {
    // The broken operational endpoint got the same events, failed them and dead-lettered them.
    const entries = await pollUntil(
      async () => {
        const found = (await client.get(`${org}/dlq?endpointId=${brokenId}`)).body.data;
        return found?.length > 0 && found;
      },
      { description: 'an operational delivery dead-lettered' },
    );
    expect(entries[0].reason).toBe('max_attempts');
    expect(brokenOps.requests.length).toBeGreaterThan(0);
    const logged = await client.get(`${org}/messages?endpointId=${brokenId}`);
    expect(logged.body.data.length).toBeGreaterThan(0);
    // Its failures, dead-letters and streak reached nobody.
    expect(events().filter((e) => [brokenId, opsId].includes(e.data.endpointId))).toEqual([]);
  });
});
