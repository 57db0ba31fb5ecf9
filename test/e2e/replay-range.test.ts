import { createTenant, pollUntil, RunningStack, startStack, TestReceiver } from '@hookbase/testing';

/** Recover by time range: replay-failed takes `{ since, until?, eventTypes? }` and counts copies. */
describe('replay-failed by time range and event types', () => {
  let stack: RunningStack;
  const receiver = new TestReceiver();
  let receiverUrl: string;
  let accepting = false;

  beforeAll(async () => {
    receiverUrl = await receiver.start();
    // 410 fails for good at once: each message is `failed` after one attempt.
    receiver.respondWith(() => (accepting ? { status: 200 } : { status: 410, body: 'gone' }));
    stack = await startStack({ HOOKBASE_RETRY_POLL_MS: '100' });
  });

  afterAll(async () => {
    await stack?.stop();
    await receiver.stop();
  });

  it('copies only the failures inside [since, until) and of the types asked, and says how many', async () => {
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken);
    const org = `/api/organizations/${organizationId}`;
    const endpoint = await client.post(`${org}/webhook-endpoints`, { url: `${receiverUrl}/rr` });
    const endpointId: string = endpoint.body.data.id;
    const failedCount = async () =>
      (await client.get(`${org}/messages?endpointId=${endpointId}&status=failed`)).body.data
        .length as number;
    const publish = async (eventType: string, n: number) =>
      expect((await client.post('/v1/events', { eventType, payload: { n } })).status).toBe(202);

    const start = new Date().toISOString();
    await publish('order.created', 1);
    await publish('invoice.paid', 2);
    await pollUntil(async () => (await failedCount()) === 2, { description: 'two failures' });
    const middle = new Date().toISOString();
    await publish('order.updated', 3);
    await publish('invoice.paid', 4);
    await pollUntil(async () => (await failedCount()) === 4, { description: 'four failures' });
    const end = new Date().toISOString();
    await publish('order.created', 5);
    await pollUntil(async () => (await failedCount()) === 5, { description: 'five failures' });
    accepting = true;

    const replay = (body: object) =>
      client.post(`${org}/webhook-endpoints/${endpointId}/replay-failed`, body);
    // Orders before `end`: 1 and 3 (5 is after it).
    const orders = await replay({ since: start, until: end, eventTypes: ['order.*'] });
    expect(orders.status).toBe(202);
    expect(orders.body).toEqual({ data: { replayed: 2, nextAfter: null } });
    // Invoices since `middle`: 4 (2 is before it).
    const invoices = await replay({ since: middle, eventTypes: ['invoice.paid'] });
    expect(invoices.body).toEqual({ data: { replayed: 1, nextAfter: null } });
    // Nothing in a range that holds no failure of that type.
    expect((await replay({ until: middle, eventTypes: ['user.*'] })).body).toEqual({
      data: { replayed: 0, nextAfter: null },
    });
    await pollUntil(() => receiver.requests.filter((r) => r.path === '/rr').length === 5 + 3, {
      description: 'the three copies delivered',
    });
    const copied = receiver.requests
      .filter((r) => r.path === '/rr')
      .slice(5)
      .map((r) => JSON.parse(r.body).n)
      .sort();
    expect(copied).toEqual([1, 3, 4]);

    // An empty or inverted range, or a bad type, is refused.
    for (const body of [
      { since: end, until: start },
      { since: start, until: start },
      { eventTypes: ['order*'] },
      { eventTypes: [] },
      { until: 'yesterday' },
    ]) {
      const refused = await replay(body);
      expect({ body, status: refused.status, code: refused.body.error?.code }).toEqual({
        body,
        status: 400,
        code: 'VALIDATION_FAILED',
      });
    }
  });
});
