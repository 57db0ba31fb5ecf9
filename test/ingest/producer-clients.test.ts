import { Kafka, logLevel, Partitioners, PartitionerArgs } from 'kafkajs';
import {
  createTenant,
  pollUntil,
  RunningStack,
  startStack,
  TestReceiver,
  testEnvironment,
  topicRecords,
} from '@hookbase/testing';

/** Each producer client HOOKBASE_KAFKA_PRODUCER may name, and the line its process logs. */
const CLIENTS = [
  { client: 'platformatic', line: /producing through @platformatic\/kafka/ },
  { client: 'kafkajs', line: /producing through kafkajs/ },
] as const;

/**
 * The producer-relevant checks for each client behind libs/kafka (`@platformatic/kafka`, the
 * default, and kafkajs): every event delivered once to each endpoint under concurrent publishes,
 * a FIFO endpoint's events in publish order, and every key on the partition kafkajs's default
 * partitioner (Kafka's murmur2) gives it, which the FIFO lanes and per-organization order rely
 * on, and which lets processes of both kinds run side by side (a rolling upgrade). The crash and
 * outage tests run with the default; `HOOKBASE_TEST_KAFKA_PRODUCER=kafkajs` runs them with the
 * other.
 */
describe.each(CLIENTS)('producing through $client', ({ client, line }) => {
  let stack: RunningStack;
  const receiver = new TestReceiver();
  let receiverUrl: string;
  const kafka = new Kafka({
    clientId: 'producer-clients-test',
    brokers: testEnvironment().kafkaBrokers.split(','),
    logLevel: logLevel.NOTHING,
  });

  /** Every record of a topic so far: its partition and key. */
  const records = (topic: string) => topicRecords(testEnvironment().kafkaBrokers, topic);

  /** Where kafkajs's default partitioner puts a key on a topic of `count` partitions. */
  function kafkajsPartition(topic: string, key: Buffer, count: number): number {
    const partitionMetadata = Array.from({ length: count }, (_, partitionId) => ({
      partitionId,
      leader: 1,
    })) as PartitionerArgs['partitionMetadata'];
    return Partitioners.DefaultPartitioner()({
      topic,
      partitionMetadata,
      message: { key, value: null },
    });
  }

  beforeAll(async () => {
    receiverUrl = await receiver.start();
    stack = await startStack({ HOOKBASE_KAFKA_PRODUCER: client });
  });

  afterAll(async () => {
    await stack?.stop();
    await receiver.stop();
  });

  it('says which client produces', async () => {
    await stack.process.waitForLine(line, 5_000);
  });

  it('delivers concurrent publishes once to each endpoint, FIFO in order, keys placed as kafkajs places them', async () => {
    const organizations = await Promise.all(
      [0, 1, 2].map(() => createTenant(stack.url, stack.adminToken, 'pro')),
    );
    const endpointsPerOrganization = 4;
    for (const { organizationId, client } of organizations) {
      for (let i = 0; i < endpointsPerOrganization; i++) {
        const response = await client.post(
          `/api/organizations/${organizationId}/webhook-endpoints`,
          { url: `${receiverUrl}/plain/${organizationId}/${i}`, eventTypes: ['order.created'] },
        );
        expect(response.status).toBe(201);
      }
    }
    const [fifoTenant] = organizations;
    const fifo = await fifoTenant.client.post(
      `/api/organizations/${fifoTenant.organizationId}/webhook-endpoints`,
      { url: `${receiverUrl}/fifo`, fifoEnabled: true, eventTypes: ['lane.step'] },
    );
    expect(fifo.status).toBe(201);

    // Concurrent publishes from every organization: the producer groups them into requests.
    const perOrganization = 60;
    await Promise.all(
      organizations.map(async ({ client }) => {
        for (let start = 0; start < perOrganization; start += 20) {
          const statuses = await Promise.all(
            Array.from({ length: 20 }, async (_, offset) => {
              const response = await client.post('/v1/events', {
                eventType: 'order.created',
                payload: { n: start + offset },
              });
              return response.status;
            }),
          );
          expect(statuses.every((status) => status === 202)).toBe(true);
        }
      }),
    );
    // One after another into the FIFO lane: the receipt order must be this order.
    const steps = 25;
    for (let step = 0; step < steps; step++) {
      const response = await fifoTenant.client.post('/v1/events', {
        eventType: 'lane.step',
        payload: { step },
      });
      expect(response.status).toBe(202);
    }

    const plain = organizations.length * endpointsPerOrganization * perOrganization;
    await pollUntil(() => receiver.requests.length >= plain + steps, {
      timeoutMs: 90_000,
      description: `${plain + steps} deliveries at the receiver`,
    });
    const byPath = new Map<string, string[]>();
    for (const request of receiver.requests) {
      byPath.set(request.path, [
        ...(byPath.get(request.path) ?? []),
        request.headers['webhook-id'] as string,
      ]);
    }
    expect(byPath.size).toBe(organizations.length * endpointsPerOrganization + 1);
    for (const [path, ids] of byPath) {
      if (path === '/fifo') continue;
      expect({ path, distinct: new Set(ids).size, received: ids.length }).toEqual({
        path,
        distinct: perOrganization,
        received: perOrganization,
      });
    }
    const lane = receiver.requests
      .filter((request) => request.path === '/fifo')
      .map((request) => (JSON.parse(request.body) as { step: number }).step);
    expect(lane).toEqual(Array.from({ length: steps }, (_, step) => step));

    // Every keyed record the producer wrote sits where kafkajs's default partitioner puts it.
    for (const topic of [`${stack.topicPrefix}.events`, `${stack.topicPrefix}.deliveries`]) {
      const admin = kafka.admin();
      await admin.connect();
      const partitions = (await admin.fetchTopicOffsets(topic)).length;
      await admin.disconnect();
      const written = await records(topic);
      expect(written.length).toBeGreaterThan(0);
      const misplaced = written.filter(
        ({ partition, key }) =>
          key !== null && partition !== kafkajsPartition(topic, key, partitions),
      );
      expect({ topic, misplaced: misplaced.length }).toEqual({ topic, misplaced: 0 });
      // More than one partition in use, so the check compared real placements. Asked only of the
      // deliveries: 13 endpoint ids over 12 partitions. The events' keys are the 3 organization
      // ids over 6 partitions, which share one partition about once in 36 runs.
      if (topic.endsWith('.deliveries')) {
        expect(new Set(written.map((record) => record.partition)).size).toBeGreaterThan(1);
      }
    }
  });
});
