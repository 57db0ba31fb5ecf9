import { randomBytes } from 'node:crypto';
import { Message, PubSub, Subscription } from '@google-cloud/pubsub';
import { OutboundMessage, PubsubDestinationAdapter } from '@hookbase/destinations';
import {
  EMULATOR_SETUP_TIMEOUT_MS,
  emulatorGoogleCredentials,
  ensurePubsub,
  pollUntil,
  stubResolver,
  unusedPort,
} from '@hookbase/testing';

/**
 * The Pub/Sub adapter against Google's fake (pstest, served by deploy/pubsub-fake): what a
 * subscription receives, the ordering key of FIFO endpoints, and what failures become.
 */
describe('PubsubDestinationAdapter (pstest)', () => {
  const projectId = 'hookbase-test';
  const run = randomBytes(4).toString('hex');
  let fake: Awaited<ReturnType<typeof ensurePubsub>> | undefined;
  let pubsub: PubSub;
  let adapter: PubsubDestinationAdapter;
  const subscriptions: Subscription[] = [];

  const message = (n: number): OutboundMessage => ({
    messageId: `msg_${run}_${n}`,
    webhookId: `msg_${run}_${n}`,
    eventId: `evt_${run}_${n}`,
    eventType: 'build.finished',
    payload: { n, ok: true },
    attemptNumber: 1,
  });
  const target = (topic: string, options: { ordered?: boolean; endpoint?: string } = {}) => ({
    endpointId: `ep_${run}`,
    kind: 'pubsub' as const,
    url: null,
    config: {
      projectId,
      topic,
      endpoint: options.endpoint ?? `http://${fake!.host}`,
      credentials: emulatorGoogleCredentials(),
    },
    secrets: [],
    ordered: options.ordered,
  });

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

  beforeAll(async () => {
    fake = await ensurePubsub();
    // universeDomain: no lookup of Google's metadata server (see pubsubClientConfig).
    pubsub = new PubSub({
      projectId,
      apiEndpoint: fake.host,
      emulatorMode: true,
      universeDomain: 'googleapis.com',
    });
    adapter = new PubsubDestinationAdapter({
      timeoutMs: 5_000,
      connectTimeoutMs: 2_000,
      allowPrivateTargets: true,
    });
  }, EMULATOR_SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await adapter?.close();
    await Promise.all(subscriptions.map((subscription) => subscription.close()));
    await pubsub?.close();
    await fake?.release();
  });

  it('publishes the payload with the delivery attributes and no ordering key', async () => {
    const name = `hookbase-${run}-plain`;
    const received = await topicWithSubscriber(name, false);
    const report = await adapter.deliver(message(1), target(name));
    expect(report.outcome).toEqual({ kind: 'succeeded', status: 200 });
    expect(JSON.parse(report.responseExcerpt!)).toEqual({ messageId: expect.any(String) });

    await pollUntil(() => received.length >= 1, { description: 'the message in the subscription' });
    const [m] = received;
    expect(JSON.parse(m.data.toString('utf8'))).toEqual({ n: 1, ok: true });
    expect(m.attributes).toEqual({
      'webhook-id': `msg_${run}_1`,
      'hookbase-message-id': `msg_${run}_1`,
      'hookbase-event-id': `evt_${run}_1`,
      'hookbase-event-type': 'build.finished',
      'hookbase-attempt': '1',
    });
    expect(m.orderingKey ?? '').toBe('');
    expect(m.id).toBe(JSON.parse(report.responseExcerpt!).messageId);
  });

  it('publishes a FIFO endpoint with its id as ordering key, received in order', async () => {
    const name = `hookbase-${run}-ordered`;
    const received = await topicWithSubscriber(name, true);
    for (const n of [1, 2, 3, 4, 5]) {
      const report = await adapter.deliver(message(n), target(name, { ordered: true }));
      expect(report.outcome.kind).toBe('succeeded');
    }
    await pollUntil(() => received.length >= 5, { description: 'five ordered messages' });
    expect(received.map((m) => JSON.parse(m.data.toString('utf8')).n)).toEqual([1, 2, 3, 4, 5]);
    expect(new Set(received.map((m) => m.orderingKey))).toEqual(new Set([`ep_${run}`]));
  });

  it('fails for good when the topic does not exist, and the ordering key is usable after', async () => {
    const missing = await adapter.deliver(
      message(1),
      target(`hookbase-${run}-missing`, { ordered: true }),
    );
    expect(missing.outcome).toMatchObject({
      kind: 'failed',
      error: expect.stringMatching(/NOT_FOUND/),
    });
    // The publisher pauses a key after a failure; the adapter resumes it, so the same key
    // (another topic, same endpoint) is not refused afterwards.
    const name = `hookbase-${run}-after`;
    const received = await topicWithSubscriber(name, true);
    const again = await adapter.deliver(message(2), target(name, { ordered: true }));
    expect(again.outcome.kind).toBe('succeeded');
    await pollUntil(() => received.length >= 1, { description: 'the message after the failure' });
  });

  it('retries, quickly, when the service cannot be reached (ordered or not)', async () => {
    const port = await unusedPort();
    for (const ordered of [false, true]) {
      const started = Date.now();
      const report = await adapter.deliver(
        message(1),
        target(`hookbase-${run}-plain`, { ordered, endpoint: `http://127.0.0.1:${port}` }),
      );
      expect(report.outcome).toMatchObject({ kind: 'retry' });
      expect(report.outcome.kind === 'retry' && report.outcome.error).toMatch(/UNAVAILABLE/);
      expect(Date.now() - started).toBeLessThan(5_000);
    }
  });

  describe('with an endpoint override named by a host name', () => {
    const port = () => fake!.host.split(':').at(-1);

    it('dials the address its resolver checked, not one the gRPC client looks up itself', async () => {
      // The name exists only in the stub: the gRPC client could not have resolved it.
      const resolver = stubResolver({ 'pubsub-fake.test': ['127.0.0.1'] });
      const resolving = new PubsubDestinationAdapter({
        timeoutMs: 5_000,
        connectTimeoutMs: 2_000,
        allowPrivateTargets: true,
        resolver,
      });
      try {
        const name = `hookbase-${run}-resolved`;
        const received = await topicWithSubscriber(name, false);
        const report = await resolving.deliver(
          message(1),
          target(name, { endpoint: `http://pubsub-fake.test:${port()}` }),
        );
        expect(report.outcome).toEqual({ kind: 'succeeded', status: 200 });
        expect(resolver.asked).toEqual(['pubsub-fake.test']);
        await pollUntil(() => received.length >= 1, { description: 'the message via the name' });
      } finally {
        await resolving.close();
      }
    });

    it('fails for good, without publishing or naming the address, a name that resolves inside at send time', async () => {
      const resolver = stubResolver({ 'pubsub-rebinding.test': ['127.0.0.1'] });
      const strict = new PubsubDestinationAdapter({
        timeoutMs: 5_000,
        connectTimeoutMs: 2_000,
        allowPrivateTargets: false,
        resolver,
      });
      try {
        const report = await strict.deliver(
          message(1),
          target(`hookbase-${run}-plain`, { endpoint: `http://pubsub-rebinding.test:${port()}` }),
        );
        expect(resolver.asked).toEqual(['pubsub-rebinding.test']);
        expect(report).toEqual({
          outcome: {
            kind: 'failed',
            error:
              'pubsub-rebinding.test resolves to a private, loopback or link-local address (HOOKBASE_ALLOW_PRIVATE_TARGETS is off)',
          },
          durationMs: 0,
          responseExcerpt: null,
        });
      } finally {
        await strict.close();
      }
    });

    it('retries a name that does not resolve now', async () => {
      const strict = new PubsubDestinationAdapter({
        timeoutMs: 5_000,
        connectTimeoutMs: 2_000,
        allowPrivateTargets: false,
        resolver: stubResolver({}),
      });
      try {
        const report = await strict.deliver(
          message(1),
          target(`hookbase-${run}-plain`, { endpoint: `https://pubsub-gone.test` }),
        );
        expect(report.outcome).toMatchObject({
          kind: 'retry',
          error: expect.stringMatching(/ENOTFOUND/),
        });
      } finally {
        await strict.close();
      }
    });
  });

  it("refuses, before publishing, a target without credentials unless the organization's grant covers it", async () => {
    const name = `hookbase-${run}-plain`;
    const withoutCredentials: Record<string, unknown> = { ...target(name).config };
    delete withoutCredentials.credentials;
    const bare = { ...target(name), config: withoutCredentials };
    expect((await adapter.deliver(message(1), bare)).outcome).toEqual({
      kind: 'failed',
      error:
        'config.credentials is required with config.endpoint: the host identity is never used towards an endpoint override',
    });
    const service = { ...withoutCredentials };
    delete service.endpoint;
    expect(
      (await adapter.deliver(message(1), { ...bare, config: service, hostIdentity: null })).outcome,
    ).toEqual({
      kind: 'failed',
      error:
        'config.credentials is required: this organization is not allowed to use the host identity',
    });
    expect(
      (
        await adapter.deliver(message(1), {
          ...bare,
          config: service,
          hostIdentity: { googleProjectIds: ['another-project'] },
        })
      ).outcome,
    ).toMatchObject({
      kind: 'failed',
      error: expect.stringMatching(/project hookbase-test is not/),
    });
  });
});
