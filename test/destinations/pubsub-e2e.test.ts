import { randomBytes } from 'node:crypto';
import { Message, PubSub, Subscription } from '@google-cloud/pubsub';
import {
  EMULATOR_SETUP_TIMEOUT_MS,
  emulatorGoogleCredentials,
  ensurePubsub,
  pollUntil,
  TcpProxy,
} from '@hookbase/testing';
import { CloudE2e, QUICK_RETRY, sentInPublishOrder, startCloudE2e } from './cloud-e2e';

/**
 * Pub/Sub endpoints end to end against Google's fake (pstest): published events arrive in a
 * subscription with their data and attributes; a FIFO endpoint publishes with its id as ordering
 * key, received in order by an ordered subscription; an outage is retried through; a topic that
 * does not exist is a permanent failure.
 */
describe('Pub/Sub endpoints (pstest)', () => {
  const projectId = 'hookbase-e2e';
  const run = randomBytes(4).toString('hex');
  let fake: Awaited<ReturnType<typeof ensurePubsub>> | undefined;
  let pubsub: PubSub;
  let e2e: CloudE2e;
  const subscriptions: Subscription[] = [];

  /** A topic and a subscription that collects (and acknowledges) what arrives. */
  async function topicWithSubscriber(name: string, ordered: boolean) {
    const [topic] = await pubsub.createTopic(name);
    const [subscription] = await topic.createSubscription(`${name}-sub`, {
      enableMessageOrdering: ordered,
    });
    subscriptions.push(subscription);
    const received: Message[] = [];
    subscription.on('message', (m: Message) => {
      received.push(m);
      m.ack();
    });
    subscription.on('error', () => {});
    return received;
  }

  const config = (topic: string, endpoint = `http://${fake!.host}`) => ({
    projectId,
    topic,
    endpoint,
    credentials: emulatorGoogleCredentials(),
  });

  beforeAll(async () => {
    fake = await ensurePubsub();
    pubsub = new PubSub({
      projectId,
      apiEndpoint: fake.host,
      emulatorMode: true,
      universeDomain: 'googleapis.com',
    });
    e2e = await startCloudE2e();
  }, EMULATOR_SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await e2e?.stop();
    await Promise.all(subscriptions.map((subscription) => subscription.close()));
    await pubsub?.close();
    await fake?.release();
  });

  it('publishes events with their data and attributes, without an ordering key', async () => {
    const name = `e2e-${run}-plain`;
    const received = await topicWithSubscriber(name, false);
    const endpointId = await e2e.endpoint({
      kind: 'pubsub',
      config: config(name),
      eventTypes: ['build.finished'],
    });
    const shown = (await e2e.client.get(`${e2e.org}/webhook-endpoints/${endpointId}`)).body.data;
    expect(shown.config).toEqual({ projectId, topic: name, endpoint: `http://${fake!.host}` });
    expect(shown.credentials).toEqual({ configured: true });

    const eventId = await e2e.publish('build.finished', { ok: true, n: 1 });
    const { id: messageId } = await e2e.messageOf(eventId, endpointId);
    await pollUntil(() => received.length >= 1, { description: 'the message in the subscription' });
    const [m] = received;
    expect(JSON.parse(m.data.toString('utf8'))).toEqual({ ok: true, n: 1 });
    expect(m.attributes).toEqual({
      'webhook-id': messageId,
      'hookbase-message-id': messageId,
      'hookbase-event-id': eventId,
      'hookbase-event-type': 'build.finished',
      'hookbase-attempt': '1',
    });
    expect(m.orderingKey ?? '').toBe('');
    expect(await e2e.delivered(eventId, endpointId)).toHaveLength(1);
  });

  it('publishes a FIFO endpoint with its id as ordering key, received in publish order', async () => {
    const name = `e2e-${run}-ordered`;
    const received = await topicWithSubscriber(name, true);
    const endpointId = await e2e.endpoint({
      kind: 'pubsub',
      config: config(name),
      eventTypes: ['build.fifo'],
      fifoEnabled: true,
    });
    const count = 10;
    const eventIds: string[] = [];
    for (let n = 1; n <= count; n++) eventIds.push(await e2e.publish('build.fifo', { n }));

    await pollUntil(() => received.length >= count, { description: `${count} ordered messages` });
    expect(received.map((m) => JSON.parse(m.data.toString('utf8')).n)).toEqual(
      Array.from({ length: count }, (_, i) => i + 1),
    );
    expect(new Set(received.map((m) => m.orderingKey))).toEqual(new Set([endpointId]));
    const perEvent = await Promise.all(eventIds.map((id) => e2e.delivered(id, endpointId)));
    expect(sentInPublishOrder(perEvent)).toBe(true);
  });

  it('retries while the service is unreachable and delivers once it is back', async () => {
    const name = `e2e-${run}-outage`;
    const received = await topicWithSubscriber(name, false);
    const proxy = new TcpProxy('127.0.0.1', Number(fake!.host.split(':').at(-1)));
    const proxyPort = await proxy.start();
    try {
      const endpointId = await e2e.endpoint({
        kind: 'pubsub',
        config: config(name, `http://127.0.0.1:${proxyPort}`),
        eventTypes: ['build.outage'],
        retry: QUICK_RETRY,
      });
      await e2e.delivered(await e2e.publish('build.outage', { n: 1 }), endpointId);

      await proxy.cut();
      const eventId = await e2e.publish('build.outage', { n: 2 });
      const { id } = await e2e.messageOf(eventId, endpointId);
      await pollUntil(
        async () => (await e2e.attemptsOf(id)).filter((a) => a.outcome === 'retry').length >= 2,
        { description: 'two attempts retried during the outage' },
      );
      await proxy.restore();

      const attempts = await e2e.delivered(eventId, endpointId);
      expect(attempts.slice(0, -1).every((a) => a.outcome === 'retry')).toBe(true);
      expect(attempts[0].error).toMatch(/UNAVAILABLE/);
      await pollUntil(() => received.length >= 2, { description: 'both messages received' });
      expect(received.map((m) => JSON.parse(m.data.toString('utf8')).n).sort()).toEqual([1, 2]);
    } finally {
      await proxy.stop();
    }
  });

  it('dead-letters a message for a topic that does not exist as permanent_failure', async () => {
    const endpointId = await e2e.endpoint({
      kind: 'pubsub',
      config: config(`e2e-${run}-missing`),
      eventTypes: ['build.lost'],
      retry: QUICK_RETRY,
    });
    const eventId = await e2e.publish('build.lost', { n: 1 });
    const { id } = await e2e.messageOf(eventId, endpointId);
    const [entry] = await pollUntil(
      async () => {
        const entries = await e2e.dlqEntries(endpointId);
        return entries.length > 0 ? entries : false;
      },
      { description: 'the DLQ entry' },
    );
    expect(entry).toMatchObject({ messageId: id, reason: 'permanent_failure' });
    expect(entry.lastError).toMatch(/NOT_FOUND/);
    expect(await e2e.attemptsOf(id)).toHaveLength(1);
  });
});
