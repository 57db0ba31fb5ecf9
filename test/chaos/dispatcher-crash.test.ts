import {
  ApiClient,
  createTenant,
  pollUntil,
  RunningStack,
  startStack,
  TestReceiver,
} from '@hookbase/testing';

const EVENTS = 600;
const ENDPOINTS = 2;
const ENDPOINT_CONCURRENCY = 10;
const KILLS = 2;

/** Counts the messages in one status by paging through the message log. */
async function countMessages(client: ApiClient, org: string, status: string): Promise<number> {
  let count = 0;
  let cursor: string | null = null;
  do {
    const query: string = `${org}/messages?status=${status}&limit=250${cursor ? `&cursor=${cursor}` : ''}`;
    const page = await client.get(query);
    count += page.body.data.length;
    cursor = page.body.nextCursor;
  } while (cursor);
  return count;
}

/**
 * At least once across crashes: the process is killed with SIGKILL twice while it delivers, and a
 * new one takes over from the committed offsets and the retry schedule. Nothing accepted is lost;
 * duplicates are bounded by what could have been in flight at each kill.
 */
describe('a dispatcher killed mid-delivery', () => {
  let stack: RunningStack;
  const receiver = new TestReceiver();
  let receiverUrl: string;

  beforeAll(async () => {
    receiverUrl = await receiver.start();
    receiver.respondWith(() => ({ status: 200, delayMs: 15 }));
    stack = await startStack({
      HOOKBASE_ENDPOINT_CONCURRENCY: String(ENDPOINT_CONCURRENCY),
      HOOKBASE_KAFKA_SESSION_TIMEOUT_MS: '6000',
      HOOKBASE_RETRY_POLL_MS: '100',
    });
  });

  afterAll(async () => {
    await stack?.stop();
    await receiver.stop();
  });

  it('delivers every accepted message, with duplicates only of in-flight work', async () => {
    const { organizationId, apiKey, client } = await createTenant(stack.url, stack.adminToken);
    const org = `/api/organizations/${organizationId}`;
    for (let i = 0; i < ENDPOINTS; i++) {
      const endpoint = await client.post(`${org}/webhook-endpoints`, {
        url: `${receiverUrl}/e${i}`,
      });
      expect(endpoint.status).toBe(201);
    }
    for (let start = 0; start < EVENTS; start += 50) {
      const events = Array.from({ length: 50 }, (_, i) => ({
        eventType: 'load',
        payload: { n: start + i },
      }));
      const response = await client.post('/v1/events/batch', { events });
      expect(response.body.data.every((r: { status: number }) => r.status === 202)).toBe(true);
    }

    const expected = EVENTS * ENDPOINTS;
    let current = stack.process;
    let url = stack.url;
    for (let kill = 1; kill <= KILLS; kill++) {
      const threshold = Math.floor((kill * expected) / (KILLS + 1));
      await pollUntil(() => receiver.requests.length >= threshold, {
        timeoutMs: 60_000,
        description: `${threshold} deliveries before kill ${kill}`,
      });
      await current.kill();
      ({ process: current, url } = await stack.startAnother());
    }

    await pollUntil(
      () => new Set(receiver.requests.map((r) => r.headers['webhook-id'])).size >= expected,
      { timeoutMs: 120_000, description: `all ${expected} messages received at least once` },
    );
    const seen = new Set(receiver.requests.map((r) => `${r.path} ${JSON.parse(r.body).n}`));
    for (let i = 0; i < ENDPOINTS; i++) {
      for (let n = 0; n < EVENTS; n++) expect(seen.has(`/e${i} ${n}`)).toBe(true);
    }
    const duplicates = receiver.requests.length - expected;
    expect(duplicates).toBeLessThanOrEqual(KILLS * ENDPOINTS * ENDPOINT_CONCURRENCY);

    // The message log of the surviving process agrees: every message succeeded, none failed.
    const survivor = new ApiClient(url, apiKey);
    await pollUntil(async () => (await countMessages(survivor, org, 'succeeded')) === expected, {
      timeoutMs: 30_000,
      description: 'every message succeeded in the log',
    });
    expect(await countMessages(survivor, org, 'failed')).toBe(0);
  });
});
