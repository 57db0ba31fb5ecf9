import { createTenant, pollUntil, RunningStack, startStack, TestReceiver } from '@hookbase/testing';

/**
 * Routing against the real stack: wildcard subscriptions, channels and content filters decide
 * which endpoints get a message; a filter changed later affects only later events; a bad filter is
 * refused with its position; the filter test route answers what the fan-out would do.
 */
describe('routing: wildcards, channels, filters', () => {
  let stack: RunningStack;
  const receiver = new TestReceiver();
  let receiverUrl: string;

  beforeAll(async () => {
    receiverUrl = await receiver.start();
    stack = await startStack();
  });

  afterAll(async () => {
    await stack?.stop();
    await receiver.stop();
  });

  const at = (path: string) => receiver.requests.filter((r) => r.path === path);
  const ids = (path: string) =>
    at(path)
      .map((r) => JSON.parse(r.body).id as string)
      .sort();

  it('delivers each event to exactly the endpoints its type, channels and payload select', async () => {
    const { client, organizationId } = await createTenant(stack.url, stack.adminToken);
    const org = `/api/organizations/${organizationId}`;
    const endpoint = async (path: string, settings: object) => {
      const response = await client.post(`${org}/webhook-endpoints`, {
        url: `${receiverUrl}${path}`,
        ...settings,
      });
      expect(response.status).toBe(201);
      return response.body.data;
    };
    const orders = await endpoint('/r/orders', { eventTypes: ['order.*'] });
    expect(orders).toMatchObject({ eventTypes: ['order.*'], channels: [], filter: null });
    await endpoint('/r/eu', { channels: ['eu'] });
    const bigEuOrders = await endpoint('/r/big-eu-orders', {
      eventTypes: ['order.*'],
      channels: ['eu', 'vip'],
      filter: { 'payload.total': { $gte: 100 } },
    });
    await endpoint('/r/all', {});

    const publish = async (id: string, eventType: string, total: number, channels?: string[]) => {
      const response = await client.post('/v1/events', {
        eventType,
        payload: { id, total },
        ...(channels ? { channels } : {}),
      });
      expect(response.status).toBe(202);
    };
    await publish('e1', 'order.created', 150, ['eu']);
    await publish('e2', 'order.item.added', 50, ['eu']);
    await publish('e3', 'order.created', 500, ['us']);
    await publish('e4', 'user.created', 500, ['eu']);
    await publish('e5', 'order.created', 200);
    await publish('e6', 'orders.legacy', 200, ['vip']);

    await pollUntil(() => at('/r/all').length === 6, { description: 'every event at /r/all' });
    // Every message of these six events is recorded once the catch-all has them all; wait for
    // the expected counts, then check nothing else came.
    await pollUntil(
      () =>
        at('/r/orders').length === 4 &&
        at('/r/eu').length === 3 &&
        at('/r/big-eu-orders').length === 1,
      { description: 'the selected endpoints served' },
    );
    const messages = await client.get(`${org}/messages?limit=250`);
    expect(messages.body.data).toHaveLength(6 + 4 + 3 + 1);
    expect(ids('/r/orders')).toEqual(['e1', 'e2', 'e3', 'e5']);
    expect(ids('/r/eu')).toEqual(['e1', 'e2', 'e4']);
    expect(ids('/r/big-eu-orders')).toEqual(['e1']);
    // The event keeps its channels, and the recipients it was fanned out to.
    const e1 = messages.body.data.find(
      (m: { endpointId: string; eventId: string }) => m.endpointId === bigEuOrders.id,
    );
    const event = await client.get(`${org}/events/${e1.eventId}`);
    expect(event.body.data).toMatchObject({ channels: ['eu'], payload: { id: 'e1' } });
    expect(event.body.data.messages).toHaveLength(4);
  });

  it('a filter or channels changed after publish affect only later events', async () => {
    const { client, organizationId } = await createTenant(stack.url, stack.adminToken);
    const org = `/api/organizations/${organizationId}`;
    const created = await client.post(`${org}/webhook-endpoints`, {
      url: `${receiverUrl}/r/changing`,
      filter: { 'payload.kind': 'a' },
    });
    expect(created.status).toBe(201);
    const endpointId = created.body.data.id;
    const publish = (id: string, kind: string) =>
      client.post('/v1/events', { eventType: 'thing.happened', payload: { id, kind } });
    expect((await publish('before', 'a')).status).toBe(202);
    // Recipients are resolved when the event is fanned out: wait for that before changing.
    await pollUntil(
      async () =>
        (await client.get(`${org}/messages?endpointId=${endpointId}`)).body.data.length === 1,
      { description: 'the first event fanned out' },
    );

    const changed = await client.patch(`${org}/webhook-endpoints/${endpointId}`, {
      filter: { 'payload.kind': 'b' },
      channels: ['beta'],
    });
    expect(changed.status).toBe(200);
    expect(changed.body.data).toMatchObject({
      filter: { 'payload.kind': 'b' },
      channels: ['beta'],
    });
    expect((await publish('after-a', 'a')).status).toBe(202);
    expect(
      (
        await client.post('/v1/events', {
          eventType: 'thing.happened',
          payload: { id: 'after-b', kind: 'b' },
          channels: ['beta'],
        })
      ).status,
    ).toBe(202);
    await pollUntil(() => at('/r/changing').length === 2, {
      description: 'the first event and the later matching one delivered',
    });
    expect(ids('/r/changing')).toEqual(['after-b', 'before']);
    const all = await client.get(`${org}/messages?endpointId=${endpointId}`);
    expect(all.body.data).toHaveLength(2);

    // Removing the filter and channels: every later event again.
    await client.patch(`${org}/webhook-endpoints/${endpointId}`, { filter: null, channels: [] });
    expect((await publish('open-again', 'z')).status).toBe(202);
    await pollUntil(() => at('/r/changing').length === 3, { description: 'open again' });
  });

  it('refuses an invalid filter with its position, and a bad wildcard or channel', async () => {
    const { client, organizationId } = await createTenant(stack.url, stack.adminToken);
    const org = `/api/organizations/${organizationId}`;
    const bad = await client.post(`${org}/webhook-endpoints`, {
      url: `${receiverUrl}/r/bad`,
      filter: { $or: [{ 'payload.total': { $gt: 1 } }, { 'payload.total': { $regex: 'x' } }] },
    });
    expect({ status: bad.status, code: bad.body.error?.code }).toEqual({
      status: 400,
      code: 'FILTER_INVALID',
    });
    expect(bad.body.error.details).toEqual({
      pointer: '/$or/1/payload.total/$regex',
      message: expect.stringContaining('unknown operator $regex'),
    });
    const good = await client.post(`${org}/webhook-endpoints`, { url: `${receiverUrl}/r/ok` });
    const patched = await client.patch(`${org}/webhook-endpoints/${good.body.data.id}`, {
      filter: { 'payload.total': { $in: 5 } },
    });
    expect(patched.body.error).toMatchObject({
      code: 'FILTER_INVALID',
      details: { pointer: '/payload.total/$in' },
    });
    for (const body of [
      { eventTypes: ['order*'] },
      { eventTypes: ['*.created'] },
      { channels: ['no spaces'] },
      { channels: Array.from({ length: 11 }, (_, i) => `c${i}`) },
    ]) {
      const response = await client.post(`${org}/webhook-endpoints`, {
        url: `${receiverUrl}/r/x`,
        ...body,
      });
      expect({ body, status: response.status, code: response.body.error?.code }).toEqual({
        body,
        status: 400,
        code: 'VALIDATION_FAILED',
      });
    }
    const tooManyChannels = await client.post('/v1/events', {
      eventType: 'x',
      payload: {},
      channels: Array.from({ length: 11 }, (_, i) => `c${i}`),
    });
    expect(tooManyChannels.status).toBe(400);
  });

  it('the filter test route answers whether an event would match, part by part', async () => {
    const { client, organizationId } = await createTenant(stack.url, stack.adminToken);
    const org = `/api/organizations/${organizationId}`;
    const created = await client.post(`${org}/webhook-endpoints`, {
      url: `${receiverUrl}/r/test`,
      eventTypes: ['invoice.*'],
      channels: ['eu'],
      filter: { 'payload.amount': { $gt: 10 }, channels: { $nin: ['sandbox'] } },
    });
    const test = (body: object) =>
      client.post(`${org}/webhook-endpoints/${created.body.data.id}/filter/test`, body);
    const yes = await test({
      eventType: 'invoice.paid',
      payload: { amount: 11 },
      channels: ['eu'],
    });
    expect(yes.status).toBe(200);
    expect(yes.body.data).toEqual({ matches: true, eventType: true, channels: true, filter: true });
    const no = await test({
      eventType: 'order.paid',
      payload: { amount: 5 },
      channels: ['eu', 'sandbox'],
    });
    expect(no.body.data).toEqual({
      matches: false,
      eventType: false,
      channels: true,
      filter: false,
    });
    const noChannel = await test({ eventType: 'invoice.paid', payload: { amount: 50 } });
    expect(noChannel.body.data).toEqual({
      matches: false,
      eventType: true,
      channels: false,
      filter: true,
    });
    expect((await test({ eventType: 'x' })).status).toBe(400);
    const missing = await client.post(
      `${org}/webhook-endpoints/ep_00000000000000000000000000/filter/test`,
      {
        eventType: 'x',
        payload: {},
      },
    );
    expect(missing.body.error?.code).toBe('ENDPOINT_NOT_FOUND');
  });
});
