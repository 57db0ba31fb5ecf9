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
  /** The partition the first test leaves full, which the second keeps clear of. */
  let fullPartition = -1;

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
      // The slow endpoint's messages stay in the window (by default they would go to the retry
      // schedule after a second behind its attempt in flight), so that the window fills.
      HOOKBASE_ENDPOINT_QUEUE_WAIT_MS: '3600000',
      HOOKBASE_SHUTDOWN_DRAIN_MS: '1000',
    });
  });

  /** A fresh organization, and a way to make its endpoints (returning each one's id). */
  async function tenantWithEndpoints() {
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken);
    const create = async (path: string, eventType: string) => {
      const response = await client.post(`/api/organizations/${organizationId}/webhook-endpoints`, {
        url: `${receiverUrl}${path}`,
        eventTypes: [eventType],
      });
      expect(response.status).toBe(201);
      return (response.body as { data: { id: string } }).data.id;
    };
    return { client, create };
  }

  afterAll(async () => {
    // The held answers go with the receiver first, so the stop has nothing to wait for.
    await receiver.stop();
    await stack?.stop();
  });

  it("delivers the other partitions' messages while one partition waits for room", async () => {
    const { client, create } = await tenantWithEndpoints();
    const slow = await create('/slow', 'slow.thing');
    const full = partitionFor(slow, PARTITIONS);
    fullPartition = full;
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

  it('takes no more of one fetch than the window has room for', async () => {
    const { client, create } = await tenantWithEndpoints();
    // A slow endpoint, a quick one on its partition and a quick one on a third partition, all
    // clear of the partition the first test left full.
    let partition = fullPartition;
    for (let n = 0; partition === fullPartition && n < 20; n++) {
      partition = partitionFor(await create('/slow', 'slow.burst'), PARTITIONS);
    }
    expect(partition).not.toBe(fullPartition);
    let near: string | undefined;
    let far: string | undefined;
    for (let n = 0; (!near || !far) && n < 60; n++) {
      const path = `/quick/${n}`;
      const other = partitionFor(await create(path, `quick.${n}`), PARTITIONS);
      if (other === partition) near ??= path;
      else if (other !== fullPartition) far ??= path;
    }
    expect(near && far).toBeTruthy();

    // One batch, so that its deliveries go to Kafka together and a fetch brings more of them than
    // the window holds: the slow endpoint's burst, then one message for each quick endpoint.
    const burst = Array.from({ length: READ_AHEAD + 5 }, (_, n) => ({
      eventType: 'slow.burst',
      payload: { n },
    }));
    const quick = [near!, far!].map((path) => ({
      eventType: `quick.${path.split('/').at(-1)}`,
      payload: {},
    }));
    expect((await client.post('/v1/events/batch', { events: [...burst, ...quick] })).status).toBe(
      207,
    );

    await pollUntil(() => receiver.requests.some((r) => r.path === far) || undefined, {
      timeoutMs: 10_000,
      description: 'the quick endpoint on another partition served',
    });
    await pollUntil(
      () => receiver.requests.filter((r) => r.path.startsWith('/slow')).length >= 2 || undefined,
      { timeoutMs: 10_000, description: "this burst's first request" },
    );
    // The window took the burst's first READ_AHEAD records, one of them in flight: the quick
    // endpoint behind them on the same partition waits until a quarter of the window is free.
    expect(receiver.requests.some((r) => r.path === near)).toBe(false);
  });
});
