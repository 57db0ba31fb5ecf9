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
});
