import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { newId } from '@hookbase/domain';
import {
  ApiClient,
  createTenant,
  pollUntil,
  RunningStack,
  startStack,
  TestReceiver,
  testEnvironment,
  topicRecords,
} from '@hookbase/testing';

/**
 * Producers may write the event envelope straight onto `<prefix>.events`. Records that cannot be
 * accepted go to `<prefix>.events.invalid` with their reason and are listed by the admin API; the
 * valid records after them still flow.
 */
describe('direct Kafka producers', () => {
  let stack: RunningStack;
  const receiver = new TestReceiver();
  let receiverUrl: string;
  const kafka = new Kafka({
    clientId: 'direct-producer-test',
    brokers: testEnvironment().kafkaBrokers.split(','),
    logLevel: logLevel.NOTHING,
  });
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });

  /** The message ids of every record on the deliveries topic so far. */
  const deliveryMessageIds = async (topic: string) =>
    (await topicRecords(testEnvironment().kafkaBrokers, topic)).map(
      ({ value }) => (JSON.parse(String(value)) as { messageId: string }).messageId,
    );

  beforeAll(async () => {
    receiverUrl = await receiver.start();
    stack = await startStack();
    await producer.connect();
  });

  afterAll(async () => {
    await producer.disconnect();
    await stack?.stop();
    await receiver.stop();
  });

  it('delivers valid envelopes and sets invalid records aside with their reasons', async () => {
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken);
    await client.post(`/api/organizations/${organizationId}/webhook-endpoints`, {
      url: `${receiverUrl}/k`,
    });
    const envelope = (orgId: string, n: number) => ({
      id: newId('evt'),
      organizationId: orgId,
      eventType: 'direct',
      payload: { n },
      acceptedAt: new Date().toISOString(),
    });
    const topic = `${stack.topicPrefix}.events`;
    // All on the organization's key, so they share a partition and the valid one comes last.
    await producer.send({
      topic,
      acks: -1,
      messages: [
        { key: organizationId, value: 'not json{' },
        { key: organizationId, value: JSON.stringify({ organizationId, payload: {} }) },
        { key: organizationId, value: JSON.stringify(envelope(newId('org'), 0)) },
        // PostgreSQL cannot store U+0000 (here in the payload, and as a raw byte in the record).
        {
          key: organizationId,
          value: JSON.stringify({ ...envelope(organizationId, 2), payload: { t: 'a\u0000' } }),
        },
        { key: organizationId, value: Buffer.from([0x7b, 0x00, 0x7d]) },
        { key: organizationId, value: JSON.stringify(envelope(organizationId, 1)) },
      ],
    });

    await pollUntil(() => receiver.requests.length === 1, {
      description: 'the valid envelope delivered',
    });
    expect(JSON.parse(receiver.requests[0].body)).toEqual({ n: 1 });

    const admin = new ApiClient(stack.url, stack.adminToken);
    const listed = await pollUntil(
      async () => {
        const page = await admin.get('/api/invalid-events');
        return page.body.total === 5 ? page.body : undefined;
      },
      { description: 'five invalid records listed' },
    );
    const reasons = listed.data.map((row: { reason: string }) => row.reason);
    expect(reasons).toEqual(
      expect.arrayContaining([
        'not JSON',
        'unknown organization',
        expect.stringContaining('eventType'),
      ]),
    );
    const notJson = listed.data
      .filter((row: { reason: string }) => row.reason === 'not JSON')
      .map((row: { valueExcerpt: string }) => row.valueExcerpt);
    // The raw NUL byte is kept as U+FFFD: PostgreSQL cannot store it.
    expect(notJson.sort()).toEqual(['not json{', '{\uFFFD}'].sort());
    // Only the admin token may list them.
    const { client: tenantClient } = await createTenant(stack.url, stack.adminToken);
    expect((await tenantClient.get('/api/invalid-events')).status).toBe(401);

    const admin2 = kafka.admin();
    await admin2.connect();
    const offsets = await admin2.fetchTopicOffsets(`${stack.topicPrefix}.events.invalid`);
    await admin2.disconnect();
    expect(offsets.reduce((sum, p) => sum + Number(p.high), 0)).toBe(5);
  });

  it('records an envelope written twice once: one message per endpoint, one delivery, one poll place', async () => {
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken, 'pro');
    const org = `/api/organizations/${organizationId}`;
    const hook = await client.post(`${org}/webhook-endpoints`, { url: `${receiverUrl}/twice` });
    const polling = await client.post(`${org}/webhook-endpoints`, { kind: 'polling' });
    expect([hook.status, polling.status]).toEqual([201, 201]);
    const topic = `${stack.topicPrefix}.events`;
    const record = (n: number) => ({
      key: organizationId,
      value: JSON.stringify({
        id: newId('evt'),
        organizationId,
        eventType: 'twice',
        payload: { n },
        acceptedAt: new Date().toISOString(),
      }),
    });
    const repeated = record(1);
    // Once alone, then again beside a new event: the second read finds it recorded already, in a
    // batch where the other event is fresh.
    await producer.send({ topic, acks: -1, messages: [repeated] });
    const eventId = JSON.parse(repeated.value).id as string;
    await pollUntil(async () => (await client.get(`${org}/events/${eventId}`)).status === 200, {
      description: 'the first copy recorded',
    });
    const second = record(2);
    const secondId = JSON.parse(second.value).id as string;
    await producer.send({ topic, acks: -1, messages: [repeated, second] });

    await pollUntil(() => receiver.requests.filter((r) => r.path === '/twice').length >= 2, {
      description: 'both events delivered to the webhook',
    });
    const event = await client.get(`${org}/events/${eventId}`);
    expect(event.status).toBe(200);
    const messages = event.body.data.messages as { endpointId: string }[];
    expect(messages.map((m) => m.endpointId).sort()).toEqual(
      [hook.body.data.id, polling.body.data.id].sort(),
    );
    const polled = await pollUntil(
      async () => {
        const page = await client.get(`${org}/webhook-endpoints/${polling.body.data.id}/poll`);
        return page.body.data.length >= 2 ? page.body.data : undefined;
      },
      { description: 'both events in the poll log' },
    );
    expect(polled.map((m: { eventId: string }) => m.eventId)).toEqual([eventId, secondId]);
    // The second read found the event recorded and sent its webhook delivery again, under the same
    // message id (a crash between recording and sending must not lose it); the dispatcher,
    // seeing that message delivered, did not send it twice.
    const webhookMessage = messages.find((m) => m.endpointId === hook.body.data.id) as unknown as {
      id: string;
    };
    const sent = await pollUntil(
      async () => {
        const ids = await deliveryMessageIds(`${stack.topicPrefix}.deliveries`);
        const copies = ids.filter((id) => id === webhookMessage.id).length;
        return copies >= 2 ? copies : undefined;
      },
      { description: "the recorded event's delivery sent again on the second read" },
    );
    expect(sent).toBe(2);
    const payloads = receiver.requests
      .filter((r) => r.path === '/twice')
      .map((r) => JSON.parse(r.body).n as number);
    // At least once allows a repeat, but the re-read record makes no second message: the webhook
    // gets event 1 once (its message was delivered before the copy was read) and event 2 once.
    expect(payloads.sort()).toEqual([1, 2]);
  });

  it('fixes recipients at acceptance: edits and deletions made before the fan-out read the event apply to later events only', async () => {
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken);
    const org = `/api/organizations/${organizationId}`;
    const create = async (path: string, eventTypes: string[]) => {
      const created = await client.post(`${org}/webhook-endpoints`, {
        url: `${receiverUrl}${path}`,
        eventTypes,
      });
      expect(created.status).toBe(201);
      return created.body.data.id as string;
    };
    const unsubscribed = await create('/fixed-unsubscribed', ['order.created']);
    const deleted = await create('/fixed-deleted', ['order.created']);
    const subscribed = await create('/fixed-subscribed', ['user.created']);
    // Accepted now; read by the fan-out only after the changes below, as when it lags behind.
    const envelope = (n: number) => ({
      id: newId('evt'),
      organizationId,
      eventType: 'order.created',
      payload: { n },
      acceptedAt: new Date().toISOString(),
    });
    const earlier = envelope(1);
    await pollUntil(() => Date.now() > Date.parse(earlier.acceptedAt), {
      description: 'a millisecond after the acceptance',
    });
    const patch = async (id: string, eventTypes: string[]) =>
      expect((await client.patch(`${org}/webhook-endpoints/${id}`, { eventTypes })).status).toBe(
        200,
      );
    await patch(unsubscribed, ['user.created']);
    await patch(subscribed, ['order.created']);
    expect((await client.delete(`${org}/webhook-endpoints/${deleted}`)).status).toBe(200);
    const later = envelope(2);
    await producer.send({
      topic: `${stack.topicPrefix}.events`,
      acks: -1,
      messages: [earlier, later].map((e) => ({ key: organizationId, value: JSON.stringify(e) })),
    });

    const recipientsOf = async (eventId: string) =>
      pollUntil(
        async () => {
          const found = await client.get(`${org}/events/${eventId}`);
          if (found.status !== 200) return undefined;
          return (found.body.data.messages as { endpointId: string; status: string }[])
            .map((m) => m.endpointId)
            .sort();
        },
        { description: `event ${eventId} recorded` },
      );
    expect(await recipientsOf(earlier.id)).toEqual([unsubscribed, deleted].sort());
    expect(await recipientsOf(later.id)).toEqual([subscribed]);
    const bodiesAt = (path: string) =>
      receiver.requests.filter((r) => r.path === path).map((r) => JSON.parse(r.body));
    await pollUntil(
      () =>
        bodiesAt('/fixed-unsubscribed').length === 1 && bodiesAt('/fixed-subscribed').length === 1,
      { description: 'the deliveries of both events' },
    );
    expect(bodiesAt('/fixed-unsubscribed')).toEqual([{ n: 1 }]);
    expect(bodiesAt('/fixed-subscribed')).toEqual([{ n: 2 }]);
    // The deleted endpoint's message is cancelled when the dispatcher sees it, and never sent.
    const cancelled = await pollUntil(
      async () => {
        const found = await client.get(`${org}/events/${earlier.id}`);
        const message = (found.body.data.messages as { endpointId: string; status: string }[]).find(
          (m) => m.endpointId === deleted,
        );
        return message?.status === 'cancelled' ? message : undefined;
      },
      { description: "the deleted endpoint's message cancelled" },
    );
    expect(cancelled.status).toBe('cancelled');
    expect(bodiesAt('/fixed-deleted')).toEqual([]);
  });
});
