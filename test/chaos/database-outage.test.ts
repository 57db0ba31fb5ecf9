import {
  createTenant,
  pollUntil,
  RunningStack,
  startStack,
  TcpProxy,
  TestReceiver,
  testEnvironment,
} from '@hookbase/testing';

/**
 * PostgreSQL unreachable (every connection cut, new ones refused) while events are accepted and
 * delivered: no attempt is used up while it is gone, nothing is lost, and delivery resumes by
 * itself when it is back. The outage is made with a proxy in front of the shared test server.
 */
describe('a PostgreSQL outage during delivery', () => {
  let stack: RunningStack;
  let proxy: TcpProxy;
  const receiver = new TestReceiver();
  let receiverUrl: string;

  beforeAll(async () => {
    receiverUrl = await receiver.start();
    const target = new URL(testEnvironment().databaseUrl);
    proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    const port = await proxy.start();
    stack = await startStack(
      { HOOKBASE_API_KEY_CACHE_MS: '600000', HOOKBASE_RETRY_POLL_MS: '100' },
      {
        viaDatabaseUrl: (url) => {
          const routed = new URL(url);
          routed.host = `127.0.0.1:${port}`;
          return routed.toString();
        },
      },
    );
  });

  afterAll(async () => {
    await stack?.stop();
    await proxy?.stop();
    await receiver.stop();
  });

  it('waits without using attempts, then delivers everything once it is back', async () => {
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken);
    const org = `/api/organizations/${organizationId}`;
    await client.post(`${org}/webhook-endpoints`, { url: `${receiverUrl}/in` });
    // Slow answers, so some attempts are in flight when the store goes away.
    receiver.respondWith(() => ({ status: 200, delayMs: 300 }));
    const before = await client.post('/v1/events/batch', {
      events: Array.from({ length: 20 }, (_, n) => ({
        eventType: 'before',
        payload: { n },
        // One of them with a key, repeated during the outage.
        ...(n === 0 ? { idempotencyKey: 'repeated-in-the-outage' } : {}),
      })),
    });
    expect(before.status).toBe(207);
    await pollUntil(() => receiver.requests.length >= 1, { description: 'deliveries under way' });

    await proxy.cut();
    // Ingest needs only Kafka (the key is cached): events are still accepted during the outage.
    const during = await client.post('/v1/events/batch', {
      events: Array.from({ length: 20 }, (_, n) => ({ eventType: 'during', payload: { n } })),
    });
    expect(during.body.data.map((r: { status: number }) => r.status)).toEqual(Array(20).fill(202));
    // A repeat of a key accepted before is answered with its event; a new key must wait.
    const repeat = await client.post('/v1/events', {
      eventType: 'before',
      payload: { n: 0 },
      idempotencyKey: 'repeated-in-the-outage',
    });
    expect(repeat.status).toBe(202);
    expect(repeat.body.data).toMatchObject({ id: before.body.data[0].data.id, duplicate: true });
    const newKey = await client.post('/v1/events', {
      eventType: 'before',
      payload: { n: 100 },
      idempotencyKey: 'new-in-the-outage',
    });
    expect(newKey.status).toBe(503);
    expect(newKey.body.error.code).toBe('SERVICE_UNAVAILABLE');
    // The management API says "not now" rather than failing.
    const log = await client.get(`${org}/messages`);
    expect(log.status).toBe(503);
    expect(log.body.error.code).toBe('SERVICE_UNAVAILABLE');
    expect(log.headers.get('retry-after')).toBe('1');
    const receivedDuringOutage = receiver.requests.length;
    await proxy.restore();

    await pollUntil(
      async () => {
        const page = await client.get(`${org}/messages?status=succeeded&limit=250`);
        return page.status === 200 && page.body.data.length === 40 ? page.body.data : undefined;
      },
      { timeoutMs: 90_000, description: 'all 40 messages succeeded after the outage' },
    );
    const all = (await client.get(`${org}/messages?limit=250`)).body.data;
    expect(all).toHaveLength(40);
    // Every message used exactly one attempt: the outage used none.
    expect(all.map((m: { attempts: number }) => m.attempts)).toEqual(Array(40).fill(1));
    const delivered = new Set(
      receiver.requests.map((r) => `${r.headers['hookbase-event-type']} ${JSON.parse(r.body).n}`),
    );
    expect(delivered.size).toBe(40);
    expect(receivedDuringOutage).toBeLessThan(40);
  });

  it('keeps retries and a FIFO head waiting through the outage without using attempts', async () => {
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken, 'pro');
    const org = `/api/organizations/${organizationId}`;
    let healthy = false;
    receiver.respondWith((request) =>
      request.path.startsWith('/later/') ? { status: healthy ? 200 : 503 } : { status: 200 },
    );
    const retry = { delaysMs: [0, 3_000, 3_000, 3_000, 3_000], maxAgeMs: 600_000 };
    const create = async (path: string, fifoEnabled: boolean) => {
      const created = await client.post(`${org}/webhook-endpoints`, {
        url: `${receiverUrl}${path}`,
        eventTypes: ['later'],
        retry,
        fifoEnabled,
      });
      expect(created.status).toBe(201);
      return created.body.data.id as string;
    };
    const plain = await create('/later/plain', false);
    const ordered = await create('/later/ordered', true);
    for (const n of [0, 1]) {
      expect((await client.post('/v1/events', { eventType: 'later', payload: { n } })).status).toBe(
        202,
      );
    }
    // The first attempts failed: the plain endpoint's two messages wait for their retries, the
    // FIFO lane's head for its own, its second message behind it. The latest of those times:
    const dueAt = await pollUntil(
      async () => {
        const waiting = (
          await client.get(`${org}/messages?endpointId=${plain}&status=awaiting_retry`)
        ).body.data as { nextAttemptAt: string }[];
        const lane = (await client.get(`${org}/webhook-endpoints/${ordered}/fifo-state`)).body.data;
        if (waiting.length !== 2 || lane.blockedReason !== 'retrying' || !lane.head?.nextAttemptAt)
          return undefined;
        return Math.max(
          ...waiting.map((m) => Date.parse(m.nextAttemptAt)),
          Date.parse(lane.head.nextAttemptAt),
        );
      },
      { description: 'the retries scheduled' },
    );
    const later = () => receiver.requests.filter((r) => r.path.startsWith('/later/'));
    const beforeOutage = later().length;
    expect(beforeOutage).toBe(3);

    await proxy.cut();
    // The retries come due while PostgreSQL is gone (and the retry loop and the lane look for
    // them every 100 ms): nothing is sent, and no attempt is used.
    await pollUntil(() => Date.now() > dueAt + 2_000, { description: 'the retries overdue' });
    expect(later()).toHaveLength(beforeOutage);
    healthy = true;
    await proxy.restore();

    const finished = await pollUntil(
      async () => {
        const page = await client.get(`${org}/messages?status=succeeded&limit=10`);
        return page.status === 200 && page.body.data.length === 4 ? page.body.data : undefined;
      },
      { timeoutMs: 60_000, description: 'the four messages succeeded after the outage' },
    );
    // One failed attempt before the outage for each plain message and the FIFO head, one
    // success after: the outage used none.
    const attempts = (finished as { endpointId: string; attempts: number }[])
      .map((m) => `${m.endpointId === plain ? 'plain' : 'ordered'} ${m.attempts}`)
      .sort();
    expect(attempts).toEqual(['ordered 1', 'ordered 2', 'plain 2', 'plain 2']);
    expect(later()).toHaveLength(beforeOutage + 4);
  });
});
