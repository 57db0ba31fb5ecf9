import { Admin, Kafka, logLevel } from 'kafkajs';
import { consumerGroup, topicNames } from '@hookbase/kafka';
import {
  ApiClient,
  createTenant,
  pollUntil,
  RunningStack,
  startStack,
  testEnvironment,
  TestReceiver,
} from '@hookbase/testing';
import { partitionFor } from '../../bench/src/partitioner';

const BLOCKED = 2_000;
const HEALTHY = 200;
const HANG_MS = 12_000;

/**
 * Two FIFO endpoints on one partition of the deliveries topic, one whose head fails for good and
 * one that is healthy: the failing lane's queue is parked (its offsets are committed, nothing of
 * it is held in the partition) and the healthy lane delivers everything, in order, meanwhile.
 * (Throughput and latency against a run without the neighbour are the bench's `isolation --fifo`.)
 */
describe('endpoints sharing a partition of the deliveries topic', () => {
  let stack: RunningStack;
  const receiver = new TestReceiver();
  let receiverUrl: string;
  let admin: Admin;

  beforeAll(async () => {
    receiverUrl = await receiver.start();
    receiver.respondWith((request) => {
      if (request.path === '/hanging') return { status: 200, delayMs: HANG_MS };
      return { status: request.path === '/failing' ? 503 : 200 };
    });
    stack = await startStack({ HOOKBASE_RETRY_POLL_MS: '100' });
    admin = new Kafka({
      clientId: 'fifo-isolation-test',
      brokers: testEnvironment().kafkaBrokers.split(','),
      logLevel: logLevel.NOTHING,
    }).admin();
    await admin.connect();
  });

  afterAll(async () => {
    await admin?.disconnect();
    await receiver.stop();
    await stack?.stop();
  });

  it('parks a blocked lane without holding offsets and never delays its neighbour', async () => {
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken, 'pro');
    const org = `/api/organizations/${organizationId}`;
    const topic = topicNames(stack.topicPrefix).deliveries;
    const [metadata] = (await admin.fetchTopicMetadata({ topics: [topic] })).topics;
    const partitions = metadata.partitions.length;

    const healthy = await fifoEndpoint(client, org, `${receiverUrl}/healthy`, 'healthy');
    const partition = partitionFor(healthy, partitions);
    // Endpoints are made until one lands on the healthy one's partition; the others are deleted.
    let failing: string | undefined;
    for (let tries = 0; !failing && tries < 20 * partitions; tries++) {
      const candidate = await fifoEndpoint(client, org, `${receiverUrl}/failing`, 'blocked');
      if (partitionFor(candidate, partitions) === partition) failing = candidate;
      else await client.delete(`${org}/webhook-endpoints/${candidate}`);
    }
    expect(failing).toBeDefined();

    for (let start = 0; start < BLOCKED; start += 500) {
      const events = Array.from({ length: 500 }, (_, i) => ({
        eventType: 'blocked',
        payload: { n: start + i },
      }));
      const response = await client.post('/v1/events/batch', { events });
      expect(response.status).toBe(207);
    }
    await pollUntil(
      async () => {
        const state = (await client.get(`${org}/webhook-endpoints/${failing}/fifo-state`)).body
          .data;
        return state.queueDepth === BLOCKED && state.blockedReason === 'retrying';
      },
      { timeoutMs: 60_000, description: `${BLOCKED} queued behind the failing head` },
    );
    // The partition's committed offset reaches its end: the blocked lane holds none of it.
    await pollUntil(
      async () => {
        const [ends] = [await admin.fetchTopicOffsets(topic)];
        const end = ends.find((p) => p.partition === partition)!.high;
        const [committed] = await admin.fetchOffsets({
          groupId: consumerGroup(stack.topicPrefix, 'dispatcher'),
          topics: [topic],
        });
        const at = committed.partitions.find((p) => p.partition === partition)!.offset;
        return at === end;
      },
      { timeoutMs: 30_000, description: 'committed offset at the end of the shared partition' },
    );

    for (let n = 0; n < HEALTHY; n++) {
      const sent = await client.post('/v1/events', { eventType: 'healthy', payload: { n } });
      expect(sent.status).toBe(202);
    }
    await pollUntil(
      () => receiver.requests.filter((r) => r.path === '/healthy').length >= HEALTHY,
      {
        timeoutMs: 60_000,
        description: 'every healthy message delivered',
      },
    );
    const order = receiver.requests
      .filter((r) => r.path === '/healthy')
      .map((r) => (JSON.parse(r.body) as { n: number }).n);
    expect(order).toEqual(Array.from({ length: HEALTHY }, (_, n) => n));
    // Meanwhile the failing head has not moved: one attempt, everything still queued behind it.
    const blocked = (await client.get(`${org}/webhook-endpoints/${failing}/fifo-state`)).body.data;
    expect(blocked).toMatchObject({ queueDepth: BLOCKED, blockedReason: 'retrying' });
    expect(receiver.requests.filter((r) => r.path === '/failing')).toHaveLength(1);
  });

  it('reads an unordered partition on past a receiver that hangs: its neighbour is not held up', async () => {
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken, 'pro');
    const org = `/api/organizations/${organizationId}`;
    const topic = topicNames(stack.topicPrefix).deliveries;
    const partitions = (await admin.fetchTopicMetadata({ topics: [topic] })).topics[0].partitions
      .length;
    const plain = async (path: string, eventType: string) =>
      (
        await client.post(`${org}/webhook-endpoints`, {
          url: `${receiverUrl}${path}`,
          eventTypes: [eventType],
        })
      ).body.data.id as string;
    const quick = await plain('/quick', 'quick');
    let slow: string | undefined;
    for (let tries = 0; !slow && tries < 20 * partitions; tries++) {
      const candidate = await plain('/hanging', 'slow');
      if (partitionFor(candidate, partitions) === partitionFor(quick, partitions)) slow = candidate;
      else await client.delete(`${org}/webhook-endpoints/${candidate}`);
    }
    expect(slow).toBeDefined();

    // The hanging endpoint's messages come first in the partition, the quick one's after them.
    for (let n = 0; n < 20; n++)
      await client.post('/v1/events', { eventType: 'slow', payload: { n } });
    const firstHang = await pollUntil(() => receiver.requests.find((r) => r.path === '/hanging'), {
      description: 'the hanging receiver called',
    });
    for (let n = 0; n < 50; n++)
      await client.post('/v1/events', { eventType: 'quick', payload: { n } });
    await pollUntil(() => receiver.requests.filter((r) => r.path === '/quick').length === 50, {
      timeoutMs: HANG_MS,
      description: 'the quick endpoint served while its neighbour hangs',
    });
    const lastQuick = Math.max(
      ...receiver.requests.filter((r) => r.path === '/quick').map((r) => r.receivedAt),
    );
    expect(lastQuick).toBeLessThan(firstHang.receivedAt + HANG_MS);
  });
});

async function fifoEndpoint(
  client: ApiClient,
  org: string,
  url: string,
  eventType: string,
): Promise<string> {
  const response = await client.post(`${org}/webhook-endpoints`, {
    url,
    fifoEnabled: true,
    eventTypes: [eventType],
    retry: { delaysMs: [0, 600_000], maxAgeMs: 3_600_000 },
  });
  expect(response.status).toBe(201);
  return response.body.data.id;
}
