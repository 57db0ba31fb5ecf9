import { randomBytes } from 'node:crypto';
import { CreateTopicCommand, SNSClient, SubscribeCommand } from '@aws-sdk/client-sns';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  Message,
  SQSClient,
} from '@aws-sdk/client-sqs';
import {
  emulatorAwsCredentials,
  EMULATOR_SETUP_TIMEOUT_MS,
  ensureMoto,
  pollUntil,
  TcpProxy,
  receiveExactly,
} from '@hookbase/testing';
import { CloudE2e, QUICK_RETRY, sentInPublishOrder, startCloudE2e } from './cloud-e2e';

/**
 * SNS endpoints end to end against moto: what a topic receives is read back through an SQS queue
 * subscribed with raw message delivery (body = message, SNS attributes = SQS attributes, a FIFO
 * topic's group id carried over to a FIFO queue).
 */
describe('SNS endpoints (moto)', () => {
  const region = 'us-east-1';
  const run = randomBytes(4).toString('hex');
  let moto: Awaited<ReturnType<typeof ensureMoto>> | undefined;
  let sns: SNSClient;
  let sqs: SQSClient;
  let e2e: CloudE2e;

  const attributesOf = (message: Message) =>
    Object.fromEntries(
      Object.entries(message.MessageAttributes ?? {}).map(([name, value]) => [
        name,
        value.StringValue,
      ]),
    );

  async function topicWithQueue(name: string): Promise<{ topicArn: string; queueUrl: string }> {
    const fifo = name.endsWith('.fifo');
    const { TopicArn } = await sns.send(
      new CreateTopicCommand({
        Name: name,
        Attributes: fifo ? { FifoTopic: 'true', ContentBasedDeduplication: 'false' } : {},
      }),
    );
    const { QueueUrl } = await sqs.send(
      new CreateQueueCommand({
        QueueName: name,
        Attributes: fifo ? { FifoQueue: 'true', ContentBasedDeduplication: 'false' } : {},
      }),
    );
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
    );
    await sns.send(
      new SubscribeCommand({
        TopicArn,
        Protocol: 'sqs',
        Endpoint: Attributes!.QueueArn,
        Attributes: { RawMessageDelivery: 'true' },
      }),
    );
    return { topicArn: TopicArn!, queueUrl: QueueUrl! };
  }

  const receive = (queueUrl: string, count: number) => receiveExactly(sqs, queueUrl, count);

  const config = (topicArn: string, endpoint = moto!.url) => ({
    region,
    topicArn,
    endpoint,
    credentials: emulatorAwsCredentials(),
  });

  beforeAll(async () => {
    moto = await ensureMoto();
    const client = { region, endpoint: moto.url, credentials: emulatorAwsCredentials() };
    sns = new SNSClient(client);
    sqs = new SQSClient({ ...client, credentials: emulatorAwsCredentials() });
    e2e = await startCloudE2e();
  }, EMULATOR_SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await e2e?.stop();
    sns?.destroy();
    sqs?.destroy();
    await moto?.release();
  });

  it('publishes events to the topic with their body and attributes', async () => {
    const { topicArn, queueUrl } = await topicWithQueue(`e2e-${run}-standard`);
    const endpointId = await e2e.endpoint({
      kind: 'sns',
      config: config(topicArn),
      eventTypes: ['user.signed_up'],
    });
    expect(
      (await e2e.client.get(`${e2e.org}/webhook-endpoints/${endpointId}`)).body.data.credentials,
    ).toEqual({ configured: true });

    const eventId = await e2e.publish('user.signed_up', { email: 'a@example.com' });
    const { id: messageId } = await e2e.messageOf(eventId, endpointId);
    const [received] = await receive(queueUrl, 1);
    expect(JSON.parse(received.Body!)).toEqual({ email: 'a@example.com' });
    expect(attributesOf(received)).toEqual({
      'webhook-id': messageId,
      'hookbase-message-id': messageId,
      'hookbase-event-id': eventId,
      'hookbase-event-type': 'user.signed_up',
      'hookbase-attempt': '1',
    });
    expect(await e2e.delivered(eventId, endpointId)).toHaveLength(1);
  });

  it('publishes a FIFO endpoint to a FIFO topic in order (read through a FIFO queue)', async () => {
    const { topicArn, queueUrl } = await topicWithQueue(`e2e-${run}-ordered.fifo`);
    const endpointId = await e2e.endpoint({
      kind: 'sns',
      config: config(topicArn),
      eventTypes: ['user.fifo'],
      fifoEnabled: true,
    });
    const count = 10;
    const eventIds: string[] = [];
    for (let n = 1; n <= count; n++) eventIds.push(await e2e.publish('user.fifo', { n }));

    const received = await receive(queueUrl, count);
    expect(received.map((m) => JSON.parse(m.Body!).n)).toEqual(
      Array.from({ length: count }, (_, i) => i + 1),
    );
    expect(new Set(received.map((m) => m.Attributes?.MessageGroupId))).toEqual(
      new Set([endpointId]),
    );
    const perEvent = await Promise.all(eventIds.map((id) => e2e.delivered(id, endpointId)));
    expect(sentInPublishOrder(perEvent)).toBe(true);
  });

  it('retries while the service is unreachable and delivers once it is back', async () => {
    const { topicArn, queueUrl } = await topicWithQueue(`e2e-${run}-outage`);
    const proxy = new TcpProxy('127.0.0.1', Number(new URL(moto!.url).port));
    const proxyPort = await proxy.start();
    try {
      const endpointId = await e2e.endpoint({
        kind: 'sns',
        config: config(topicArn, `http://127.0.0.1:${proxyPort}`),
        eventTypes: ['user.outage'],
        retry: QUICK_RETRY,
      });
      await e2e.delivered(await e2e.publish('user.outage', { n: 1 }), endpointId);

      await proxy.cut();
      const eventId = await e2e.publish('user.outage', { n: 2 });
      const { id } = await e2e.messageOf(eventId, endpointId);
      await pollUntil(
        async () => (await e2e.attemptsOf(id)).filter((a) => a.outcome === 'retry').length >= 2,
        { description: 'two attempts retried during the outage' },
      );
      await proxy.restore();

      const attempts = await e2e.delivered(eventId, endpointId);
      expect(attempts.slice(0, -1).every((a) => a.outcome === 'retry')).toBe(true);
      expect(attempts[0].error).toMatch(/^network: /);
      const received = await receive(queueUrl, 2);
      expect(received.map((m) => JSON.parse(m.Body!).n).sort()).toEqual([1, 2]);
    } finally {
      await proxy.stop();
    }
  });

  it('dead-letters a message for a topic that does not exist as permanent_failure', async () => {
    const endpointId = await e2e.endpoint({
      kind: 'sns',
      config: config(`arn:aws:sns:${region}:123456789012:e2e-${run}-missing`),
      eventTypes: ['user.lost'],
      retry: QUICK_RETRY,
    });
    const eventId = await e2e.publish('user.lost', { n: 1 });
    const { id } = await e2e.messageOf(eventId, endpointId);
    const [entry] = await pollUntil(
      async () => {
        const entries = await e2e.dlqEntries(endpointId);
        return entries.length > 0 ? entries : false;
      },
      { description: 'the DLQ entry' },
    );
    expect(entry).toMatchObject({ messageId: id, reason: 'permanent_failure' });
    expect(entry.lastError).toMatch(/NotFound/);
    expect(await e2e.attemptsOf(id)).toHaveLength(1);
  });
});
