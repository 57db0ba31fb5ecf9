import { createTenant, pollUntil, RunningStack, startStack, TestReceiver } from '@hookbase/testing';
import { partitionFor } from '../../bench/src/partitioner';

const PARTITIONS = 4;
const READ_AHEAD = 10;

/**
 * A partition of the deliveries topic whose read-ahead window is full (its endpoint is slow and
 * HOOKBASE_DISPATCH_READ_AHEAD of its messages are unfinished) is left out of the dispatcher's
 * fetches while the other partitions are read: their endpoints get their messages at once, while
 * the slow endpoint's answers are still held back. With kafkajs's consumer a new record on the
 * full partition held every partition's reading (its fetcher waits for every batch of a fetch);
 * the `@platformatic/kafka` client reads with Hookbase's own loop, which can leave one out.
 */
describe('a full read-ahead window holds up only its own partition', () => {
  let stack: RunningStack;
  const receiver = new TestReceiver();
  let receiverUrl: string;

  beforeAll(async () => {
    // The slow endpoint's answers are held back far longer than the test looks.
    receiver.respondWith((request) =>
      request.path.startsWith('/slow') ? { status: 200, delayMs: 60_000 } : { status: 200 },
    );
    receiverUrl = await receiver.start();
    stack = await startStack({
      HOOKBASE_KAFKA_CONSUMER: 'platformatic',
      HOOKBASE_DELIVERIES_PARTITIONS: String(PARTITIONS),
      HOOKBASE_DISPATCH_READ_AHEAD: String(READ_AHEAD),
      HOOKBASE_ENDPOINT_CONCURRENCY: '1',
      HOOKBASE_SHUTDOWN_DRAIN_MS: '1000',
    });
  });

  afterAll(async () => {
    // The held answers go with the receiver first, so the stop has nothing to wait for.
    await receiver.stop();
    await stack?.stop();
  });

  it("delivers the other partitions' messages while one partition waits for room", async () => {
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken);
    const create = async (path: string, eventType: string) => {
      const response = await client.post(`/api/organizations/${organizationId}/webhook-endpoints`, {
        url: `${receiverUrl}${path}`,
        eventTypes: [eventType],
      });
      expect(response.status).toBe(201);
      return (response.body as { data: { id: string } }).data.id;
    };
    const slow = await create('/slow', 'slow.thing');
    const full = partitionFor(slow, PARTITIONS);
    // Endpoints on the other partitions (each endpoint's messages are keyed by its id).
    const others: string[] = [];
    for (let n = 0; others.length < 2 && n < 40; n++) {
      const id = await create(`/healthy/${n}`, 'ping');
      if (partitionFor(id, PARTITIONS) !== full) others.push(`/healthy/${n}`);
    }
    expect(others).toHaveLength(2);

    // More unfinished messages than the window holds: one in flight, the rest waiting for it.
    for (let n = 0; n <= READ_AHEAD; n++) {
      expect(
        (await client.post('/v1/events', { eventType: 'slow.thing', payload: { n } })).status,
      ).toBe(202);
    }
    await pollUntil(() => receiver.requests.some((r) => r.path === '/slow') || undefined, {
      timeoutMs: 30_000,
      description: "the slow endpoint's first request",
    });
    // One more record on the full partition, then one for every healthy endpoint.
    expect((await client.post('/v1/events', { eventType: 'slow.thing', payload: {} })).status).toBe(
      202,
    );
    expect((await client.post('/v1/events', { eventType: 'ping', payload: {} })).status).toBe(202);

    await pollUntil(
      () => others.every((path) => receiver.requests.some((r) => r.path === path)) || undefined,
      { timeoutMs: 10_000, description: 'the endpoints on the other partitions served' },
    );
    // Meanwhile the slow endpoint's first answer is still held back: its partition is still full.
    expect(receiver.requests.filter((r) => r.path === '/slow')).toHaveLength(1);
  });
});
