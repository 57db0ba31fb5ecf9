import {
  ApiClient,
  createTenant,
  HookbaseProcess,
  pollUntil,
  RunningStack,
  startStack,
  TestReceiver,
} from '@hookbase/testing';

const LEASE_MS = 6_000;
const ENDPOINTS = 50;
const EVENTS = 40;
const KILLS = 2;

/**
 * FIFO lanes across crashes and rebalances: a head interrupted by SIGKILL is sent again only
 * after its lease, never by two workers at once; under load on many FIFO endpoints, with the
 * process killed and restarted and a second one joining and leaving, every endpoint still sees
 * its messages first in send order, nothing is lost, and the only duplicates are, per lane and
 * kill, the head in flight and the one before it if its success was still being written (ADR 9).
 */
describe('FIFO lanes across crashes', () => {
  let stack: RunningStack;
  const receiver = new TestReceiver();
  let receiverUrl: string;
  let hangFirst = true;
  // The process serving the API and delivering now (each kill replaces it).
  let current: HookbaseProcess;
  let currentUrl: string;

  beforeAll(async () => {
    receiverUrl = await receiver.start();
    receiver.respondWith((request) => {
      if (request.path === '/lease' && hangFirst) {
        hangFirst = false;
        return { status: 200, delayMs: 120_000 };
      }
      return { status: 200, delayMs: request.path === '/lease' ? 0 : 30 };
    });
    stack = await startStack({
      HOOKBASE_FIFO_LEASE_MS: String(LEASE_MS),
      HOOKBASE_FIFO_SWEEP_MS: '200',
      HOOKBASE_DELIVERY_TIMEOUT_MS: '60000',
      HOOKBASE_KAFKA_SESSION_TIMEOUT_MS: '6000',
      HOOKBASE_RETRY_POLL_MS: '100',
    });
    current = stack.process;
    currentUrl = stack.url;
  });

  afterAll(async () => {
    await stack?.stop();
    await receiver.stop();
  });

  it('sends an interrupted head again only after its lease, and shows the lane waiting for it', async () => {
    const { organizationId, apiKey, client } = await createTenant(
      stack.url,
      stack.adminToken,
      'pro',
    );
    const org = `/api/organizations/${organizationId}`;
    const endpointId: string = (
      await client.post(`${org}/webhook-endpoints`, {
        url: `${receiverUrl}/lease`,
        fifoEnabled: true,
        eventTypes: ['lease'],
      })
    ).body.data.id;
    for (let n = 0; n < 3; n++)
      await client.post('/v1/events', { eventType: 'lease', payload: { n } });
    const atLease = () => receiver.requests.filter((r) => r.path === '/lease');
    await pollUntil(() => atLease().length === 1, { description: 'the head in flight' });
    // The survivor is up before the kill, so the lane is watched from the moment its worker dies:
    // the window to see it waiting is the whole lease, not the lease less a process's boot (which
    // takes seconds on a loaded machine, and once took all of it).
    const next = await stack.startAnother();
    await current.kill();
    const killedAt = Date.now();
    ({ process: current, url: currentUrl } = next);
    const survivor = new ApiClient(currentUrl, apiKey);

    const waiting = await pollUntil(
      async () => {
        const state = (await survivor.get(`${org}/webhook-endpoints/${endpointId}/fifo-state`)).body
          .data;
        return state.blockedReason === 'lease' ? state : undefined;
      },
      { intervalMs: 100, timeoutMs: 20_000, description: 'the lane waiting for the lease' },
    );
    expect(waiting).toMatchObject({
      state: 'blocked',
      queueDepth: 3,
      leaseSeconds: LEASE_MS / 1000,
    });
    expect(waiting.head.status).toBe('in_flight');

    await pollUntil(() => atLease().length === 4, {
      timeoutMs: 30_000,
      description: 'the head again, then the rest',
    });
    const [first, again] = atLease();
    expect(again.headers['webhook-id']).toBe(first.headers['webhook-id']);
    // Not before the lease (renewed at most one renewal interval before the kill) ran out.
    expect(again.receivedAt - killedAt).toBeGreaterThanOrEqual(LEASE_MS - LEASE_MS / 5 - 100);
    expect(atLease().map((r) => (JSON.parse(r.body) as { n: number }).n)).toEqual([0, 0, 1, 2]);
  });

  it('keeps every endpoint in order through kills, restarts and a rebalance, losing nothing', async () => {
    const { organizationId, client } = await createTenant(currentUrl, stack.adminToken, 'pro');
    const org = `/api/organizations/${organizationId}`;
    for (let i = 0; i < ENDPOINTS; i++) {
      const endpoint = await client.post(`${org}/webhook-endpoints`, {
        url: `${receiverUrl}/lane${i}`,
        fifoEnabled: true,
        eventTypes: ['load'],
      });
      expect(endpoint.status).toBe(201);
    }
    for (let n = 0; n < EVENTS; n++) {
      expect((await client.post('/v1/events', { eventType: 'load', payload: { n } })).status).toBe(
        202,
      );
    }
    const expected = ENDPOINTS * EVENTS;
    const loadRequests = () => receiver.requests.filter((r) => r.path.startsWith('/lane'));
    const distinct = () => new Set(loadRequests().map((r) => r.headers['webhook-id'])).size;

    for (let kill = 1; kill <= KILLS; kill++) {
      const threshold = Math.floor((kill * expected) / (KILLS + 2));
      await pollUntil(() => distinct() >= threshold, {
        timeoutMs: 60_000,
        description: `${threshold} deliveries before kill ${kill}`,
      });
      await current.kill();
      ({ process: current, url: currentUrl } = await stack.startAnother());
    }
    // A second worker joins (a rebalance of the deliveries topic) and leaves again in good order.
    const joined = await stack.startAnother();
    await pollUntil(() => distinct() >= Math.floor((3 * expected) / (KILLS + 2)), {
      timeoutMs: 60_000,
      description: 'deliveries while two workers run',
    });
    await joined.process.stop();

    await pollUntil(() => distinct() >= expected, {
      timeoutMs: 90_000,
      description: `all ${expected} messages received`,
    });
    for (let i = 0; i < ENDPOINTS; i++) {
      const firstSeen: number[] = [];
      const ids = new Set<string>();
      for (const request of loadRequests()) {
        if (request.path !== `/lane${i}`) continue;
        const id = String(request.headers['webhook-id']);
        if (ids.has(id)) continue;
        ids.add(id);
        firstSeen.push((JSON.parse(request.body) as { n: number }).n);
      }
      expect(firstSeen).toEqual(Array.from({ length: EVENTS }, (_, n) => n));
    }
    // Only the head in flight at a kill, and the one before it while its success is written,
    // can be sent twice: at most two per lane per kill.
    const duplicates = loadRequests().length - expected;
    expect(duplicates).toBeLessThanOrEqual(2 * KILLS * ENDPOINTS);
  });
});
