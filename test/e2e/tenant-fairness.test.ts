import { createTenant, pollUntil, RunningStack, startStack, TestReceiver } from '@hookbase/testing';

// A small pool so a few hanging endpoints could fill it: 12 attempts in flight, 4 per endpoint,
// a share of 25 % (3 slots) that any organization always finds free.
const POOL = 12;
const PER_ENDPOINT = 4;
const SHARE = 3;
const HANGING_ENDPOINTS = 4; // 4 × 4 = 16 attempts wanted, more than the pool
// Hookbase gives up on a hanging attempt after this long; the receiver holds longer still. With
// one pool for everyone (no share), the healthy organization's messages would wait this long.
const DELIVERY_TIMEOUT_MS = 60_000;
const HOLD_MS = 90_000;
// Generous for a loaded machine, and far below the timeout above.
const HEALTHY_BOUND_MS = 20_000;

/**
 * One organization's endpoints never answer (the receiver holds their requests open until it
 * stops) while another's answer at once: the hanging one holds at most the pool minus one share,
 * and the healthy one's deliveries arrive while the hanging attempts are still open.
 */
describe('fair share of the dispatch pool between organizations', () => {
  let stack: RunningStack;
  const receiver = new TestReceiver();
  let receiverUrl: string;

  beforeAll(async () => {
    receiverUrl = await receiver.start();
    receiver.respondWith((request) =>
      request.path.startsWith('/hang/')
        ? { status: 200, delayMs: HOLD_MS }
        : { status: 200, body: 'ok' },
    );
    stack = await startStack({
      HOOKBASE_DISPATCH_CONCURRENCY: String(POOL),
      HOOKBASE_ENDPOINT_CONCURRENCY: String(PER_ENDPOINT),
      HOOKBASE_DISPATCH_ORGANIZATION_SHARE: '25',
      HOOKBASE_DELIVERY_TIMEOUT_MS: String(DELIVERY_TIMEOUT_MS),
      HOOKBASE_RETRY_POLL_MS: '100',
    });
  });

  afterAll(async () => {
    // The held requests are dropped with the receiver; Hookbase's attempts then end at once.
    await receiver.stop();
    await stack?.stop();
  });

  const hanging = () => receiver.requests.filter((r) => r.path.startsWith('/hang/'));

  it('delivers a healthy organization’s events promptly beside another’s hanging endpoints', async () => {
    const a = await createTenant(stack.url, stack.adminToken);
    const aOrg = `/api/organizations/${a.organizationId}`;
    for (let i = 0; i < HANGING_ENDPOINTS; i++) {
      const created = await a.client.post(`${aOrg}/webhook-endpoints`, {
        url: `${receiverUrl}/hang/${i}`,
      });
      expect(created.status).toBe(201);
    }
    // 6 events × 4 endpoints = 24 messages: more than the endpoints' limits and the pool allow.
    const aEvents = Array.from({ length: 6 }, (_, n) => ({ eventType: 'slow', payload: { n } }));
    expect((await a.client.post('/v1/events/batch', { events: aEvents })).status).toBe(207);
    await pollUntil(() => hanging().length >= POOL - SHARE, {
      description: `the hanging organization's first ${POOL - SHARE} attempts held open`,
    });

    const b = await createTenant(stack.url, stack.adminToken);
    const bOrg = `/api/organizations/${b.organizationId}`;
    const endpoint = await b.client.post(`${bOrg}/webhook-endpoints`, { url: `${receiverUrl}/ok` });
    expect(endpoint.status).toBe(201);
    const publishedAt = Date.now();
    const bEvents = Array.from({ length: 20 }, (_, n) => ({ eventType: 'quick', payload: { n } }));
    expect((await b.client.post('/v1/events/batch', { events: bEvents })).status).toBe(207);
    await pollUntil(
      async () =>
        (await b.client.get(`${bOrg}/messages?status=succeeded&limit=100`)).body.data.length ===
        bEvents.length,
      {
        timeoutMs: HEALTHY_BOUND_MS,
        description: `the healthy organization's ${bEvents.length} deliveries while the other's attempts hang`,
      },
    );
    expect(Date.now() - publishedAt).toBeLessThan(HEALTHY_BOUND_MS);
    expect(receiver.requests.filter((r) => r.path === '/ok')).toHaveLength(bEvents.length);

    // The hanging organization never held more than the pool minus one share: none of its
    // requests has ended (they are held for longer than the test), so each one is still open.
    expect(hanging()).toHaveLength(POOL - SHARE);
    // Its messages beyond that wait on the retry schedule, not in their partition: held without
    // an attempt used.
    const held = await pollUntil(
      async () => {
        const messages = (await a.client.get(`${aOrg}/messages?status=awaiting_retry&limit=100`))
          .body.data as { attempts: number }[];
        return messages.length > 0 ? messages : undefined;
      },
      { description: 'a message of the hanging organization held' },
    );
    expect(held.every((m) => m.attempts === 0)).toBe(true);
    // An operator sees it in the metrics: the pool's slots, its waiters, and the holds.
    const metrics = await (await fetch(`${stack.url}/metrics`)).text();
    const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(metrics)?.[1]);
    // Held for the share (waiting for the pool), or behind their endpoint's own hanging attempts.
    expect(value('hookbase_dispatch_share_holds_total')).toBeGreaterThan(0);
    expect(
      value('hookbase_dispatch_share_holds_total') + value('hookbase_dispatch_backlog_holds_total'),
    ).toBeGreaterThanOrEqual(held.length);
    expect(value('hookbase_dispatch_pool_slots\\{state="in_use"\\}')).toBe(POOL - SHARE);
    expect(value('hookbase_dispatch_pool_slots\\{state="free"\\}')).toBe(SHARE);
  });
});
