import { createServer, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { createTenant, pollUntil, RunningStack, startStack, TestReceiver } from '@hookbase/testing';

/**
 * The walking skeleton end to end: REST ingest → Kafka → fan-out → dispatcher → a real HTTP
 * receiver, with every signature checked by the standardwebhooks package (not our code).
 */
describe('an event published over REST reaches an HTTP receiver', () => {
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

  it('delivers 200 events, signed, and the log shows them succeeded', async () => {
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken);
    const endpoint = await client.post(`/api/organizations/${organizationId}/webhook-endpoints`, {
      url: `${receiverUrl}/hooks`,
      eventTypes: ['order.created'],
    });
    expect(endpoint.status).toBe(201);
    expect(endpoint.body.data).toMatchObject({
      kind: 'http',
      status: 'active',
      fifoEnabled: false,
    });
    expect(JSON.stringify(endpoint.body)).not.toContain('whsec_');
    const endpointId: string = endpoint.body.data.id;
    const secret = await client.get(
      `/api/organizations/${organizationId}/webhook-endpoints/${endpointId}/secret`,
    );
    expect(secret.body.data.key).toMatch(/^whsec_/);

    const published = new Map<string, Record<string, unknown>>();
    for (let start = 0; start < 200; start += 20) {
      const responses = await Promise.all(
        Array.from({ length: 20 }, async (_, offset) => {
          const payload = { orderId: start + offset, note: `order ${start + offset} ✓` };
          const response = await client.post('/v1/events', { eventType: 'order.created', payload });
          expect(response.status).toBe(202);
          expect(response.body.data).toMatchObject({
            eventType: 'order.created',
            duplicate: false,
          });
          return [response.body.data.id as string, payload] as const;
        }),
      );
      for (const [id, payload] of responses) published.set(id, payload);
    }
    // An event no endpoint subscribes to must not be delivered.
    const ignored = await client.post('/v1/events', {
      eventType: 'user.created',
      payload: { a: 1 },
    });
    expect(ignored.status).toBe(202);

    await pollUntil(
      () => new Set(receiver.requests.map((r) => r.headers['webhook-id'])).size >= 200,
      {
        timeoutMs: 90_000,
        description: '200 distinct deliveries at the receiver',
      },
    );

    const verifier = new Webhook(secret.body.data.key);
    const bodies = new Set<string>();
    for (const request of receiver.requests) {
      expect(request.method).toBe('POST');
      expect(request.path).toBe('/hooks');
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers['hookbase-event-type']).toBe('order.created');
      expect(request.headers['hookbase-attempt']).toBe('1');
      expect(request.headers['webhook-id']).toMatch(/^msg_/);
      const verified = verifier.verify(request.body, {
        'webhook-id': String(request.headers['webhook-id']),
        'webhook-timestamp': String(request.headers['webhook-timestamp']),
        'webhook-signature': String(request.headers['webhook-signature']),
      });
      expect(verified).toEqual(JSON.parse(request.body));
      bodies.add(request.body);
    }
    const expectedBodies = new Set(
      [...published.values()].map((payload) => JSON.stringify(payload)),
    );
    expect(bodies).toEqual(expectedBodies);

    const log = await pollUntil(
      async () => {
        const page = await client.get(
          `/api/organizations/${organizationId}/messages?endpointId=${endpointId}&status=succeeded&limit=250`,
        );
        return page.body.data.length === 200 ? page.body : undefined;
      },
      { timeoutMs: 30_000, description: '200 succeeded messages in the log' },
    );
    expect(new Set(log.data.map((m: { eventId: string }) => m.eventId))).toEqual(
      new Set(published.keys()),
    );
    expect(log.nextCursor).toBeNull();

    const [eventId] = published.keys();
    const event = await client.get(`/api/organizations/${organizationId}/events/${eventId}`);
    expect(event.status).toBe(200);
    expect(event.body.data).toMatchObject({
      id: eventId,
      eventType: 'order.created',
      payload: published.get(eventId),
    });
    expect(event.body.data.messages).toHaveLength(1);
    const message = await client.get(
      `/api/organizations/${organizationId}/messages/${event.body.data.messages[0].id}`,
    );
    expect(message.body.data).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(message.body.data.attemptHistory).toEqual([
      expect.objectContaining({ attempt: 1, outcome: 'succeeded', responseStatus: 200 }),
    ]);
  });

  it('shows a message in flight while its attempt is under way, and succeeded once it answers', async () => {
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken);
    // A receiver that holds its answer until the test has seen the message in flight.
    const held: ServerResponse[] = [];
    const slow = createServer((req, res) => {
      req.resume();
      held.push(res);
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/slow`;
      const endpoint = await client.post(`/api/organizations/${organizationId}/webhook-endpoints`, {
        url,
      });
      expect(endpoint.status).toBe(201);
      const event = await client.post('/v1/events', { eventType: 'slow.thing', payload: { n: 1 } });
      expect(event.status).toBe(202);
      const messageId = await pollUntil(
        async () => {
          const found = await client.get(
            `/api/organizations/${organizationId}/events/${event.body.data.id}`,
          );
          return found.status === 200 ? found.body.data.messages[0]?.id : undefined;
        },
        { timeoutMs: 30_000, description: 'the event recorded with its message' },
      );
      const statusOf = async () =>
        (await client.get(`/api/organizations/${organizationId}/messages/${messageId}`)).body.data
          .status as string;
      await pollUntil(async () => held.length === 1 && (await statusOf()) === 'in_flight', {
        timeoutMs: 30_000,
        description: 'the message shown in flight while the receiver holds its answer',
      });
      held[0].writeHead(200).end('ok');
      await pollUntil(async () => (await statusOf()) === 'succeeded', {
        timeoutMs: 30_000,
        description: 'the message succeeded once the receiver answered',
      });
    } finally {
      for (const res of held) if (!res.writableEnded) res.destroy();
      await new Promise((resolve) => slow.close(resolve));
    }
  });

  it('retries a failing receiver on the endpoint schedule and dead-letters a permanent failure', async () => {
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken);
    const retrying = new TestReceiver();
    const gone = new TestReceiver();
    const retryingUrl = await retrying.start();
    const goneUrl = await gone.start();
    try {
      retrying.respondWith((_, index) => (index === 0 ? { status: 503 } : { status: 204 }));
      gone.respondWith(() => ({ status: 410, body: 'gone for good' }));
      const create = (url: string) =>
        client.post(`/api/organizations/${organizationId}/webhook-endpoints`, {
          url,
          retry: { delaysMs: [0, 300, 300], maxAgeMs: 60_000 },
        });
      const retryingEndpoint = (await create(`${retryingUrl}/a`)).body.data.id;
      const goneEndpoint = (await create(`${goneUrl}/b`)).body.data.id;
      const event = await client.post('/v1/events', {
        eventType: 'invoice.paid',
        payload: { n: 1 },
      });
      expect(event.status).toBe(202);

      const succeeded = await pollUntil(
        async () => {
          const page = await client.get(
            `/api/organizations/${organizationId}/messages?endpointId=${retryingEndpoint}&status=succeeded`,
          );
          return page.body.data[0];
        },
        { timeoutMs: 30_000, description: 'the retried message to succeed' },
      );
      expect(succeeded.attempts).toBe(2);
      expect(retrying.requests.map((r) => r.headers['hookbase-attempt'])).toEqual(['1', '2']);
      expect(new Set(retrying.requests.map((r) => r.headers['webhook-id'])).size).toBe(1);

      const entry = await pollUntil(
        async () => {
          const page = await client.get(
            `/api/organizations/${organizationId}/dlq?endpointId=${goneEndpoint}`,
          );
          return page.body.data[0];
        },
        { timeoutMs: 30_000, description: 'a DLQ entry for the 410 endpoint' },
      );
      expect(entry).toMatchObject({
        reason: 'permanent_failure',
        attempts: 1,
        lastResponseStatus: 410,
        eventId: event.body.data.id,
      });
      expect(gone.requests).toHaveLength(1);
      const failed = await client.get(
        `/api/organizations/${organizationId}/messages/${entry.messageId}`,
      );
      expect(failed.body.data).toMatchObject({ status: 'failed', lastResponseStatus: 410 });
      expect(failed.body.data.attemptHistory[0].responseExcerpt).toBe('gone for good');
    } finally {
      await retrying.stop();
      await gone.stop();
    }
  });
});
