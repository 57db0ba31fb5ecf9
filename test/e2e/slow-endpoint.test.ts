import { createTenant, pollUntil, RunningStack, startStack, TestReceiver } from '@hookbase/testing';
import { partitionFor } from '../../bench/src/partitioner';

const PARTITIONS = 2;
const READ_AHEAD = 100;
const CONCURRENCY = 2;
/** The slow endpoint answers every request after this long: 2 at a time, about 20 a second. */
const SLOW_ANSWER_MS = 100;
/** Four windows' worth: at 20 a second, about 20 s of the slow endpoint's work. */
const BURST = 400;
/**
 * Requests the slow endpoint may have had when the quick one is served. Waiting behind the
 * backlog, the quick endpoint's message would be read only after BURST - READ_AHEAD × 3/4 (325)
 * of the burst were finished; handed back, the backlog leaves the window about a window a second.
 */
const SLOW_BEFORE_QUICK_BOUND = 250;

/**
 * A non-FIFO endpoint that answers, but slower than its messages come, must not hold up the other
 * endpoints of its partition: its messages waiting behind its own attempts go to the retry
 * schedule (held, no attempt used) after HOOKBASE_ENDPOINT_QUEUE_WAIT_MS (the default, 1 s here)
 * instead of filling the partition's read-ahead window, and come back as it can take them.
 */
describe('a slow endpoint beside a quick one on the same partition', () => {
  let stack: RunningStack;
  const receiver = new TestReceiver();
  let receiverUrl: string;

  beforeAll(async () => {
    receiver.respondWith((request) =>
      request.path.startsWith('/slow')
        ? { status: 200, delayMs: SLOW_ANSWER_MS }
        : { status: 200, body: 'ok' },
    );
    receiverUrl = await receiver.start();
    stack = await startStack({
      HOOKBASE_DELIVERIES_PARTITIONS: String(PARTITIONS),
      HOOKBASE_DISPATCH_READ_AHEAD: String(READ_AHEAD),
      HOOKBASE_ENDPOINT_CONCURRENCY: String(CONCURRENCY),
      HOOKBASE_RETRY_POLL_MS: '100',
    });
  });

  afterAll(async () => {
    await receiver.stop();
    await stack?.stop();
  });

  it("serves the quick endpoint while the slow one's backlog waits on the retry schedule, and delivers the backlog once each", async () => {
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken);
    const org = `/api/organizations/${organizationId}`;
    const create = async (path: string, eventType: string) => {
      const response = await client.post(`${org}/webhook-endpoints`, {
        url: `${receiverUrl}${path}`,
        eventTypes: [eventType],
      });
      expect(response.status).toBe(201);
      return (response.body as { data: { id: string } }).data.id;
    };
    const partition = partitionFor(await create('/slow', 'slow.thing'), PARTITIONS);
    let quick: string | undefined;
    for (let n = 0; !quick && n < 20; n++) {
      const path = `/quick/${n}`;
      if (partitionFor(await create(path, `quick.${n}`), PARTITIONS) === partition) quick = path;
    }
    expect(quick).toBeDefined();

    // The burst, then (accepted after it, so behind it on the partition) the quick message.
    const burst = Array.from({ length: BURST }, (_, n) => ({
      eventType: 'slow.thing',
      payload: { n },
    }));
    expect((await client.post('/v1/events/batch', { events: burst })).status).toBe(207);
    const quickType = `quick.${quick!.split('/').at(-1)}`;
    expect((await client.post('/v1/events', { eventType: quickType, payload: {} })).status).toBe(
      202,
    );

    const slowRequests = () => receiver.requests.filter((r) => r.path === '/slow');
    const slowBeforeQuick = await pollUntil(
      () => (receiver.requests.some((r) => r.path === quick) ? slowRequests().length : undefined),
      { timeoutMs: 30_000, description: 'the quick endpoint served' },
    );
    expect(slowBeforeQuick).toBeLessThan(SLOW_BEFORE_QUICK_BOUND);

    // Every message of the backlog arrives, each once (held messages use no attempt and are not
    // sent twice).
    await pollUntil(() => slowRequests().length >= BURST || undefined, {
      timeoutMs: 90_000,
      description: `the slow endpoint's ${BURST} deliveries`,
    });
    const seen = slowRequests().map((r) => (JSON.parse(r.body) as { n: number }).n);
    expect(new Set(seen).size).toBe(BURST);
    expect(seen).toHaveLength(BURST);

    const metrics = await (await fetch(`${stack.url}/metrics`)).text();
    const holds = Number(/^hookbase_dispatch_backlog_holds_total (\S+)$/m.exec(metrics)?.[1]);
    expect(holds).toBeGreaterThan(0);
  }, 150_000);
});
