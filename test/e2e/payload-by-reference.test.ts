import {
  createTenant,
  pollUntil,
  RunningStack,
  startStack,
  TestReceiver,
  testEnvironment,
  topicRecords,
} from '@hookbase/testing';

const INLINE_LIMIT = 1024;
/** Room for one of the large payloads below, not two. */
const READ_AHEAD_PAYLOAD_BYTES = 1500;
/** How long the slow path's receiver takes to answer. */
const SLOW_ANSWER_MS = 4_000;
/** Above the 256 KiB default, so that a payload may be larger than a FIFO lane's window. */
const MAX_PAYLOAD_BYTES = 1024 * 1024;

/**
 * An event's payload goes in its delivery records only up to HOOKBASE_DELIVERY_INLINE_PAYLOAD_BYTES;
 * a larger one stays with the event in PostgreSQL and the dispatcher reads it there. Either way
 * every endpoint gets the payload, and every attempt of a message sends the same body, with the
 * keys in the order they were published in (the retries read the payload from the event). The
 * dispatcher holds payloads for the messages it has read ahead only within
 * HOOKBASE_DISPATCH_READ_AHEAD_PAYLOAD_BYTES; the others read theirs from the event when their
 * attempts are about to start, as does a FIFO lane's head whose payload is larger than its window.
 */
describe('payloads read from the event', () => {
  let stack: RunningStack;
  const receiver = new TestReceiver();
  let receiverUrl: string;

  /** Every record on the deliveries topic so far, parsed. */
  const deliveryRecords = async () =>
    (await topicRecords(testEnvironment().kafkaBrokers, `${stack.topicPrefix}.deliveries`)).map(
      ({ value }) => JSON.parse(String(value)) as Record<string, unknown>,
    );

  beforeAll(async () => {
    receiverUrl = await receiver.start();
    // Each message's first attempt fails; its retry succeeds.
    receiver.respondWith((request) =>
      request.path === '/slow'
        ? { status: 200, delayMs: SLOW_ANSWER_MS }
        : request.headers['hookbase-attempt'] === '1'
          ? { status: 500 }
          : { status: 200 },
    );
    stack = await startStack({
      HOOKBASE_DELIVERY_INLINE_PAYLOAD_BYTES: String(INLINE_LIMIT),
      HOOKBASE_DISPATCH_READ_AHEAD_PAYLOAD_BYTES: String(READ_AHEAD_PAYLOAD_BYTES),
      HOOKBASE_RETRY_POLL_MS: '100',
      HOOKBASE_MAX_PAYLOAD_BYTES: String(MAX_PAYLOAD_BYTES),
    });
  });

  afterAll(async () => {
    await stack?.stop();
    await receiver.stop();
  });

  it('sends a large payload without its records and a small one with them, each to every endpoint', async () => {
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken);
    const retry = { delaysMs: [0, 100], maxAgeMs: 600_000 };
    for (const path of ['/a', '/b']) {
      const created = await client.post(`/api/organizations/${organizationId}/webhook-endpoints`, {
        url: `${receiverUrl}${path}`,
        retry,
      });
      expect(created.status).toBe(201);
    }
    // Keys out of the order jsonb would give them (shorter keys first), and text of many bytes a
    // character, so that the large one is over the limit in bytes and not in characters.
    const small = { zeta: 'small', alpha: 1 };
    const large = { zeta: 'large', alpha: 2, text: 'é'.repeat(INLINE_LIMIT / 2 + 1) };
    const ids: Record<string, string> = {};
    for (const [name, payload] of Object.entries({ small, large })) {
      const published = await client.post('/v1/events', { eventType: 'size.test', payload });
      expect(published.status).toBe(202);
      ids[name] = (published.body as { data: { id: string } }).data.id;
    }

    // Two attempts of each message: 2 events × 2 endpoints.
    await pollUntil(
      () =>
        receiver.requests.filter((r) => r.headers['hookbase-attempt'] === '2').length >= 4 ||
        undefined,
      { timeoutMs: 30_000, description: 'the retries of all four messages' },
    );
    const bodiesOf = (eventId: string, path: string) =>
      receiver.requests
        .filter((r) => r.headers['hookbase-event-id'] === eventId && r.path === path)
        .map((r) => r.body);
    // Every attempt, the first and the retry, sends the payload as published: its keys in the
    // producer's order, whether it came with the record or from the event.
    for (const path of ['/a', '/b']) {
      expect(bodiesOf(ids.small, path)).toEqual([JSON.stringify(small), JSON.stringify(small)]);
      expect(bodiesOf(ids.large, path)).toEqual([JSON.stringify(large), JSON.stringify(large)]);
    }

    const records = await deliveryRecords();
    const ofEvent = (eventId: string) => records.filter((record) => record.eventId === eventId);
    expect(ofEvent(ids.small)).toHaveLength(2);
    for (const record of ofEvent(ids.small)) expect(record.payload).toEqual(small);
    expect(ofEvent(ids.large)).toHaveLength(2);
    for (const record of ofEvent(ids.large)) {
      expect(record).not.toHaveProperty('payload');
      expect(JSON.stringify(record).length).toBeLessThan(400);
    }
  });

  it('holds payloads ahead of their attempts only within its budget, and reads the others when they are sent', async () => {
    const heldBytes = async () => {
      const metrics = await (await fetch(`${stack.url}/metrics`)).text();
      return Number(/^hookbase_dispatch_read_ahead_payload_bytes (\S+)$/m.exec(metrics)?.[1]);
    };
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken);
    const created = await client.post(`/api/organizations/${organizationId}/webhook-endpoints`, {
      url: `${receiverUrl}/slow`,
    });
    expect(created.status).toBe(201);
    // Three payloads of about 1.1 KB each, each read from its event: the budget has room for one.
    const payloads = [1, 2, 3].map((n) => ({ zeta: n, text: 'x'.repeat(1100) }));
    const bytes = JSON.stringify(payloads[0]).length;
    expect(bytes).toBeGreaterThan(INLINE_LIMIT);
    expect(bytes).toBeLessThanOrEqual(READ_AHEAD_PAYLOAD_BYTES);
    expect(2 * bytes).toBeGreaterThan(READ_AHEAD_PAYLOAD_BYTES);
    for (const payload of payloads) {
      const published = await client.post('/v1/events', { eventType: 'size.test', payload });
      expect(published.status).toBe(202);
    }
    const slow = () => receiver.requests.filter((r) => r.path === '/slow');
    await pollUntil(() => slow().length >= 3 || undefined, {
      timeoutMs: 30_000,
      description: 'the three slow requests under way',
    });
    // All three are in flight, their answers a few seconds off: one payload is held, the other
    // two were read from their events when their attempts started.
    expect(await heldBytes()).toBe(bytes);
    expect(
      slow()
        .map((r) => r.body)
        .sort(),
    ).toEqual(payloads.map((p) => JSON.stringify(p)).sort());
    // Once they are answered, nothing is held.
    await pollUntil(async () => (await heldBytes()) === 0 || undefined, {
      timeoutMs: 30_000,
      description: 'the payloads let go after the answers',
    });
    expect(slow()).toHaveLength(3);
  });

  it("sends a FIFO lane's head whose payload is larger than the lane's window, read when it is sent, in its place", async () => {
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken, 'pro');
    const created = await client.post(`/api/organizations/${organizationId}/webhook-endpoints`, {
      url: `${receiverUrl}/ordered`,
      fifoEnabled: true,
      retry: { delaysMs: [0, 100], maxAgeMs: 600_000 },
    });
    expect(created.status).toBe(201);
    // A lane reads at most 256 KiB of payloads ahead; the second payload alone is larger.
    const payloads = [
      { n: 1, text: 'a' },
      { n: 2, text: 'b'.repeat(300 * 1024) },
      { n: 3, text: 'c' },
    ];
    for (const payload of payloads) {
      const published = await client.post('/v1/events', { eventType: 'size.test', payload });
      expect(published.status).toBe(202);
    }
    const ordered = () => receiver.requests.filter((r) => r.path === '/ordered');
    // Each first attempt fails and its retry succeeds: six requests, each retry before the next.
    await pollUntil(() => ordered().length >= 6 || undefined, {
      timeoutMs: 30_000,
      description: 'both attempts of the three ordered messages',
    });
    expect(ordered().map((r) => [r.headers['hookbase-attempt'], r.body])).toEqual(
      payloads.flatMap((payload) => [
        ['1', JSON.stringify(payload)],
        ['2', JSON.stringify(payload)],
      ]),
    );
  });
});
