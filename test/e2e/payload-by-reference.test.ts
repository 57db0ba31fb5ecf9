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

/**
 * An event's payload goes in its delivery records only up to HOOKBASE_DELIVERY_INLINE_PAYLOAD_BYTES;
 * a larger one stays with the event in PostgreSQL and the dispatcher reads it there. Either way
 * every endpoint gets the payload, and every attempt of a message sends the same body, with the
 * keys in the order they were published in (the retries read the payload from the event).
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
      request.headers['hookbase-attempt'] === '1' ? { status: 500 } : { status: 200 },
    );
    stack = await startStack({
      HOOKBASE_DELIVERY_INLINE_PAYLOAD_BYTES: String(INLINE_LIMIT),
      HOOKBASE_RETRY_POLL_MS: '100',
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
});
