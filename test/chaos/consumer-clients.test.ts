import {
  ApiClient,
  createTenant,
  metricSamples,
  pollUntil,
  RunningStack,
  startStack,
  TestReceiver,
} from '@hookbase/testing';

/**
 * The two consumer clients behind libs/kafka (HOOKBASE_KAFKA_CONSUMER: kafkajs, and
 * `@platformatic/kafka` with Hookbase's own fetch loop) as members of the same consumer groups,
 * as during a rolling change from one to the other: they share the partitions, every event
 * reaches each endpoint once and a FIFO endpoint's in publish order, and when the kafkajs process
 * stops the other takes its partitions over from the offsets it committed. The crash and outage
 * tests run with the default client; `HOOKBASE_TEST_KAFKA_CONSUMER=platformatic` runs them with
 * the other.
 */
describe('consumers of both clients in one group, as in a rolling change', () => {
  let stack: RunningStack;
  const receiver = new TestReceiver();
  let receiverUrl: string;

  beforeAll(async () => {
    receiverUrl = await receiver.start();
    stack = await startStack({ HOOKBASE_KAFKA_CONSUMER: 'kafkajs' });
  });

  afterAll(async () => {
    await stack?.stop();
    await receiver.stop();
  });

  /** Every request received on `path`: its webhook ids, and the FIFO steps in receipt order. */
  const received = (path: string) => receiver.requests.filter((r) => r.path === path);

  it('shares the partitions, delivers once and in order, and hands them over on a stop', async () => {
    await stack.process.waitForLine(/reading \S+\.deliveries through kafkajs/, 10_000);
    const other = await stack.startAnother({ HOOKBASE_KAFKA_CONSUMER: 'platformatic' });
    await other.process.waitForLine(/reading \S+\.deliveries through @platformatic\/kafka/, 10_000);

    const deliveries = `topic="${stack.topicPrefix}.deliveries"`;
    const group = `group="${stack.topicPrefix}.dispatcher",${deliveries}`;
    const partitions = await pollUntil(
      async () => (await metricSamples(stack.url, 'hookbase_topic_partitions')).get(deliveries),
      { timeoutMs: 10_000, description: 'the deliveries topic partition count reported' },
    );
    // One group, members of both clients: each holds some partitions, together all of them.
    const shares = await pollUntil(
      async () => {
        const kafkajs = (
          await metricSamples(stack.url, 'hookbase_consumer_assigned_partitions')
        ).get(group);
        const platformatic = (
          await metricSamples(other.url, 'hookbase_consumer_assigned_partitions')
        ).get(group);
        return kafkajs && platformatic && kafkajs + platformatic === partitions
          ? { kafkajs, platformatic }
          : undefined;
      },
      { timeoutMs: 60_000, description: 'both processes holding partitions of the deliveries' },
    );
    expect(shares.kafkajs).toBeGreaterThan(0);
    expect(shares.platformatic).toBeGreaterThan(0);

    const { organizationId, apiKey, client } = await createTenant(
      stack.url,
      stack.adminToken,
      'pro',
    );
    const endpoints = 6;
    for (let i = 0; i < endpoints; i++) {
      const response = await client.post(`/api/organizations/${organizationId}/webhook-endpoints`, {
        url: `${receiverUrl}/plain/${i}`,
        eventTypes: ['order.created'],
      });
      expect(response.status).toBe(201);
    }
    const fifo = await client.post(`/api/organizations/${organizationId}/webhook-endpoints`, {
      url: `${receiverUrl}/fifo`,
      fifoEnabled: true,
      eventTypes: ['lane.step'],
    });
    expect(fifo.status).toBe(201);

    /** Publishes `count` plain events at once and `steps` FIFO steps one after another. */
    async function publish(through: ApiClient, count: number, steps: number[]): Promise<void> {
      const statuses = await Promise.all(
        Array.from({ length: count }, async (_, n) => {
          const response = await through.post('/v1/events', {
            eventType: 'order.created',
            payload: { n },
          });
          return response.status;
        }),
      );
      expect(statuses.every((status) => status === 202)).toBe(true);
      for (const step of steps) {
        const response = await through.post('/v1/events', {
          eventType: 'lane.step',
          payload: { step },
        });
        expect(response.status).toBe(202);
      }
    }

    /** Each plain endpoint got `perEndpoint` distinct messages once each; the lane `steps`. */
    async function expectDelivered(perEndpoint: number, steps: number): Promise<void> {
      await pollUntil(
        () => receiver.requests.length >= endpoints * perEndpoint + steps || undefined,
        { timeoutMs: 90_000, description: `${endpoints * perEndpoint + steps} deliveries` },
      );
      for (let i = 0; i < endpoints; i++) {
        const ids = received(`/plain/${i}`).map((r) => r.headers['webhook-id'] as string);
        expect({ endpoint: i, received: ids.length, distinct: new Set(ids).size }).toEqual({
          endpoint: i,
          received: perEndpoint,
          distinct: perEndpoint,
        });
      }
      const lane = received('/fifo').map((r) => (JSON.parse(r.body) as { step: number }).step);
      expect(lane).toEqual(Array.from({ length: steps }, (_, step) => step));
    }

    await publish(
      client,
      40,
      Array.from({ length: 20 }, (_, step) => step),
    );
    await expectDelivered(40, 20);

    // The kafkajs process stops in order; the other takes every partition and reads on from the
    // offsets committed, without sending anything twice.
    expect(await stack.process.stop()).toBe(0);
    await pollUntil(
      async () =>
        (await metricSamples(other.url, 'hookbase_consumer_assigned_partitions')).get(group) ===
          partitions || undefined,
      { timeoutMs: 60_000, description: 'the platformatic process holding every partition' },
    );
    await publish(
      new ApiClient(other.url, apiKey),
      40,
      Array.from({ length: 10 }, (_, step) => 20 + step),
    );
    await expectDelivered(80, 30);
  });
});
