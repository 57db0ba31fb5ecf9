import { Webhook } from 'standardwebhooks';
import { createTenant, pollUntil, RunningStack, startStack, TestReceiver } from '@hookbase/testing';

/**
 * Endpoint state is read fresh before every attempt: pause holds, resume sends, delete
 * dead-letters, a new URL takes the next attempt, and a rotation signs with both secrets.
 */
const CONCURRENCY = 2;

describe('endpoint changes while work is queued', () => {
  let stack: RunningStack;
  const receiver = new TestReceiver();
  let receiverUrl: string;

  beforeAll(async () => {
    receiverUrl = await receiver.start();
    stack = await startStack({
      HOOKBASE_HOLD_RECHECK_MS: '200',
      HOOKBASE_RETRY_POLL_MS: '100',
      HOOKBASE_ENDPOINT_CONCURRENCY: String(CONCURRENCY),
      // A message waiting behind its endpoint's attempts stays in the dispatcher's memory (by
      // default it would go to the retry schedule after a second, and be read afresh from there).
      HOOKBASE_ENDPOINT_QUEUE_WAIT_MS: '3600000',
    });
  });

  afterAll(async () => {
    await stack?.stop();
    await receiver.stop();
  });

  async function setup(path: string, extra: Record<string, unknown> = {}) {
    const tenant = await createTenant(stack.url, stack.adminToken);
    const org = `/api/organizations/${tenant.organizationId}`;
    const endpoint = await tenant.client.post(`${org}/webhook-endpoints`, {
      url: `${receiverUrl}${path}`,
      ...extra,
    });
    expect(endpoint.status).toBe(201);
    return { ...tenant, org, endpointId: endpoint.body.data.id as string };
  }

  const requestsTo = (path: string) => receiver.requests.filter((r) => r.path === path);

  it('holds messages of a paused endpoint without using attempts, and sends them on resume', async () => {
    const { client, org, endpointId } = await setup('/paused');
    await client.patch(`${org}/webhook-endpoints/${endpointId}`, { status: 'paused' });
    await client.post('/v1/events', { eventType: 'held', payload: { n: 1 } });
    const held = await pollUntil(
      async () => {
        const [message] = (await client.get(`${org}/messages?endpointId=${endpointId}`)).body.data;
        return message?.status === 'awaiting_retry' ? message : undefined;
      },
      { description: 'the message held for the paused endpoint' },
    );
    expect(held.attempts).toBe(0);
    // Held across several re-checks: still no attempt and nothing sent.
    await pollUntil(
      async () => {
        const message = (await client.get(`${org}/messages/${held.id}`)).body.data;
        return new Date(message.updatedAt).getTime() > new Date(held.updatedAt).getTime() + 400;
      },
      { description: 'two re-checks of the hold' },
    );
    expect((await client.get(`${org}/messages/${held.id}`)).body.data.attempts).toBe(0);
    expect(requestsTo('/paused')).toHaveLength(0);

    await client.patch(`${org}/webhook-endpoints/${endpointId}`, { status: 'active' });
    await pollUntil(() => requestsTo('/paused').length === 1, {
      description: 'delivery after resume',
    });
    const delivered = await pollUntil(
      async () => {
        const message = (await client.get(`${org}/messages/${held.id}`)).body.data;
        return message.status === 'succeeded' ? message : undefined;
      },
      { description: 'the held message succeeded' },
    );
    expect(delivered.attempts).toBe(1);
  });

  it('queues nothing new for a disabled endpoint and delivers what it held once enabled', async () => {
    const { client, org, endpointId } = await setup('/disabled', { status: 'paused' });
    await client.post('/v1/events', { eventType: 'queued', payload: { n: 1 } });
    await pollUntil(
      async () =>
        (await client.get(`${org}/messages?endpointId=${endpointId}&status=awaiting_retry`)).body
          .data.length === 1,
      { description: 'the message held' },
    );
    await client.patch(`${org}/webhook-endpoints/${endpointId}`, { status: 'disabled' });
    const skipped = await client.post('/v1/events', { eventType: 'not-queued', payload: { n: 2 } });
    await pollUntil(
      async () => (await client.get(`${org}/events/${skipped.body.data.id}`)).status === 200,
      { description: 'the second event recorded' },
    );
    const event = (await client.get(`${org}/events/${skipped.body.data.id}`)).body.data;
    expect(event.messages).toEqual([]);
    expect(requestsTo('/disabled')).toHaveLength(0);

    await client.patch(`${org}/webhook-endpoints/${endpointId}`, { status: 'active' });
    await pollUntil(() => requestsTo('/disabled').length === 1, {
      description: 'the held message sent',
    });
    expect(JSON.parse(requestsTo('/disabled')[0].body)).toEqual({ n: 1 });
  });

  it('dead-letters queued messages of a deleted endpoint and clears its secrets', async () => {
    const { client, org, endpointId } = await setup('/deleted', { status: 'paused' });
    await client.post('/v1/events', { eventType: 'doomed', payload: {} });
    await pollUntil(
      async () =>
        (await client.get(`${org}/messages?endpointId=${endpointId}&status=awaiting_retry`)).body
          .data.length === 1,
      { description: 'the message held' },
    );
    expect((await client.delete(`${org}/webhook-endpoints/${endpointId}`)).body).toEqual({
      data: { id: endpointId, deleted: true },
    });
    const entry = await pollUntil(
      async () => (await client.get(`${org}/dlq?endpointId=${endpointId}`)).body.data[0],
      { description: 'an endpoint_deleted DLQ entry' },
    );
    expect(entry).toMatchObject({ reason: 'endpoint_deleted', attempts: 0 });
    const message = (await client.get(`${org}/messages/${entry.messageId}`)).body.data;
    expect(message.status).toBe('cancelled');
    expect((await client.get(`${org}/webhook-endpoints/${endpointId}/secret`)).status).toBe(404);
    expect(requestsTo('/deleted')).toHaveLength(0);
  });

  it('sends nothing more to an endpoint deleted while its message waited for a slot', async () => {
    const { client, org, endpointId } = await setup('/busy');
    // The endpoint's attempts in flight answer only after the test has deleted it.
    receiver.respondWith((request) =>
      request.path === '/busy' ? { status: 200, delayMs: 3_000 } : { status: 200 },
    );
    const events = Array.from({ length: CONCURRENCY + 1 }, (_, n) => ({
      eventType: 'busy',
      payload: { n },
    }));
    expect((await client.post('/v1/events/batch', { events })).status).toBe(207);
    await pollUntil(() => requestsTo('/busy').length === CONCURRENCY, {
      description: `the endpoint's ${CONCURRENCY} attempts in flight`,
    });
    expect((await client.delete(`${org}/webhook-endpoints/${endpointId}`)).status).toBe(200);

    const entry = await pollUntil(
      async () => (await client.get(`${org}/dlq?endpointId=${endpointId}`)).body.data[0],
      { timeoutMs: 20_000, description: "the waiting message's endpoint_deleted DLQ entry" },
    );
    expect(entry).toMatchObject({ reason: 'endpoint_deleted', attempts: 0 });
    // The attempts under way when it was deleted finish; the one that waited is never sent.
    await pollUntil(
      async () =>
        (await client.get(`${org}/messages?endpointId=${endpointId}&status=succeeded`)).body.data
          .length === CONCURRENCY,
      { description: 'the attempts in flight finished' },
    );
    expect(requestsTo('/busy')).toHaveLength(CONCURRENCY);
    receiver.respondWith(() => ({ status: 200 }));
  });

  it('sends the next attempt to a changed URL', async () => {
    receiver.respondWith((request) =>
      request.path === '/old' ? { status: 503 } : { status: 200 },
    );
    const { client, org, endpointId } = await setup('/old', {
      retry: { delaysMs: [0, 1500], maxAgeMs: 60_000 },
    });
    await client.post('/v1/events', { eventType: 'moved', payload: {} });
    await pollUntil(() => requestsTo('/old').length === 1, {
      description: 'the first attempt at /old',
    });
    await client.patch(`${org}/webhook-endpoints/${endpointId}`, { url: `${receiverUrl}/new` });
    await pollUntil(() => requestsTo('/new').length === 1, { description: 'the retry at /new' });
    expect(requestsTo('/new')[0].headers['hookbase-attempt']).toBe('2');
    expect(requestsTo('/new')[0].headers['webhook-id']).toBe(
      requestsTo('/old')[0].headers['webhook-id'],
    );
    expect(requestsTo('/old')).toHaveLength(1);
    receiver.respondWith(() => ({ status: 200 }));
  });

  it('signs with both secrets during a rotation overlap', async () => {
    const { client, org, endpointId } = await setup('/rotated');
    const oldKey = (await client.get(`${org}/webhook-endpoints/${endpointId}/secret`)).body.data
      .key;
    const rotated = await client.post(`${org}/webhook-endpoints/${endpointId}/secret/rotate`, {
      overlapSeconds: 3600,
    });
    expect(rotated.status).toBe(200);
    const newKey: string = rotated.body.data.key;
    expect(newKey).toMatch(/^whsec_/);
    expect(newKey).not.toBe(oldKey);
    expect((await client.get(`${org}/webhook-endpoints/${endpointId}/secret`)).body.data.key).toBe(
      newKey,
    );

    await client.post('/v1/events', { eventType: 'signed', payload: { a: 1 } });
    await pollUntil(() => requestsTo('/rotated').length === 1, {
      description: 'the signed delivery',
    });
    const request = requestsTo('/rotated')[0];
    const headers = {
      'webhook-id': String(request.headers['webhook-id']),
      'webhook-timestamp': String(request.headers['webhook-timestamp']),
      'webhook-signature': String(request.headers['webhook-signature']),
    };
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(oldKey).verify(request.body, headers)).toEqual({ a: 1 });
    expect(new Webhook(newKey).verify(request.body, headers)).toEqual({ a: 1 });

    // Without an overlap the old secret stops signing at once.
    await client.post(`${org}/webhook-endpoints/${endpointId}/secret/rotate`, {
      overlapSeconds: 0,
    });
    const latest = (await client.get(`${org}/webhook-endpoints/${endpointId}/secret`)).body.data
      .key;
    await client.post('/v1/events', { eventType: 'signed', payload: { a: 2 } });
    await pollUntil(() => requestsTo('/rotated').length === 2, {
      description: 'the second delivery',
    });
    const second = requestsTo('/rotated')[1];
    expect(String(second.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(
      new Webhook(latest).verify(second.body, {
        'webhook-id': String(second.headers['webhook-id']),
        'webhook-timestamp': String(second.headers['webhook-timestamp']),
        'webhook-signature': String(second.headers['webhook-signature']),
      }),
    ).toEqual({ a: 2 });
  });

  it('keeps recipients fixed at publish: a later subscription change does not touch queued work', async () => {
    const { client, org, endpointId } = await setup('/subs', {
      eventTypes: ['a'],
      status: 'paused',
    });
    await client.post('/v1/events', { eventType: 'a', payload: { n: 1 } });
    await pollUntil(
      async () =>
        (await client.get(`${org}/messages?endpointId=${endpointId}`)).body.data.length === 1,
      { description: 'the message recorded' },
    );
    await client.patch(`${org}/webhook-endpoints/${endpointId}`, {
      eventTypes: ['b'],
      status: 'active',
    });
    await client.post('/v1/events', { eventType: 'a', payload: { n: 2 } });
    await client.post('/v1/events', { eventType: 'b', payload: { n: 3 } });
    await pollUntil(() => requestsTo('/subs').length === 2, { description: 'two deliveries' });
    expect(
      requestsTo('/subs')
        .map((r) => JSON.parse(r.body).n)
        .sort(),
    ).toEqual([1, 3]);
  });
});
