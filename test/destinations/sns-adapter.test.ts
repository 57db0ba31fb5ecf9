import { randomBytes } from 'node:crypto';
import { CreateTopicCommand, SNSClient, SubscribeCommand } from '@aws-sdk/client-sns';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  Message,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { OutboundMessage, SnsDestinationAdapter } from '@hookbase/destinations';
import {
  emulatorAwsCredentials,
  EMULATOR_SETUP_TIMEOUT_MS,
  ensureMoto,
  unusedPort,
  receiveFromQueue,
} from '@hookbase/testing';

/**
 * The SNS adapter against moto's server. What a topic received is read back through an SQS queue
 * subscribed with raw message delivery: the body is the message, the SNS message attributes
 * become SQS message attributes, and a FIFO topic's group and deduplication ids carry over.
 */
describe('SnsDestinationAdapter (moto)', () => {
  const region = 'us-east-1';
  const run = randomBytes(4).toString('hex');
  let moto: Awaited<ReturnType<typeof ensureMoto>> | undefined;
  let sns: SNSClient;
  let sqs: SQSClient;
  let adapter: SnsDestinationAdapter;

  const message = (n: number): OutboundMessage => ({
    messageId: `msg_${run}_${n}`,
    webhookId: `wh_${run}_${n}`,
    eventId: `evt_${run}_${n}`,
    eventType: 'user.signed_up',
    payload: { n, email: 'a@example.com' },
    attemptNumber: 1,
  });
  const target = (topicArn: string, endpoint = moto!.url) => ({
    endpointId: `ep_${run}`,
    kind: 'sns' as const,
    url: null,
    config: { region, topicArn, endpoint, credentials: emulatorAwsCredentials() },
    secrets: [],
  });

  /** A topic with a queue subscribed to it (raw delivery); FIFO when the name ends in .fifo. */
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

  const receive = (queueUrl: string, expected: number) =>
    receiveFromQueue(sqs, queueUrl, expected, 10_000);

  const stringAttributes = (m: Message) =>
    Object.fromEntries(
      Object.entries(m.MessageAttributes ?? {}).map(([name, value]) => [name, value.StringValue]),
    );

  beforeAll(async () => {
    moto = await ensureMoto();
    const client = { region, endpoint: moto.url };
    sns = new SNSClient({ ...client, credentials: emulatorAwsCredentials() });
    sqs = new SQSClient({ ...client, credentials: emulatorAwsCredentials() });
    adapter = new SnsDestinationAdapter({
      timeoutMs: 5_000,
      connectTimeoutMs: 2_000,
      allowPrivateTargets: true,
    });
  }, EMULATOR_SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await adapter?.close();
    sns?.destroy();
    sqs?.destroy();
    await moto?.release();
  });

  it('publishes the payload with the delivery attributes', async () => {
    const { topicArn, queueUrl } = await topicWithQueue(`hookbase-${run}-standard`);
    const report = await adapter.deliver(message(1), target(topicArn));
    expect(report.outcome).toEqual({ kind: 'succeeded', status: 200 });
    expect(JSON.parse(report.responseExcerpt!)).toEqual({ MessageId: expect.any(String) });

    const [received] = await receive(queueUrl, 1);
    expect(JSON.parse(received.Body!)).toEqual({ n: 1, email: 'a@example.com' });
    expect(stringAttributes(received)).toEqual({
      'webhook-id': `wh_${run}_1`,
      'hookbase-message-id': `msg_${run}_1`,
      'hookbase-event-id': `evt_${run}_1`,
      'hookbase-event-type': 'user.signed_up',
      'hookbase-attempt': '1',
    });
  });

  it('sets the endpoint as message group and the webhook id as deduplication id on a FIFO topic', async () => {
    const { topicArn, queueUrl } = await topicWithQueue(`hookbase-${run}-ordered.fifo`);
    for (const n of [1, 2, 3]) {
      const report = await adapter.deliver(message(n), target(topicArn));
      expect(report.outcome.kind).toBe('succeeded');
    }
    const received = await receive(queueUrl, 3);
    expect(received.map((m) => JSON.parse(m.Body!).n)).toEqual([1, 2, 3]);
    for (const [index, m] of received.entries()) {
      expect(m.Attributes).toMatchObject({
        MessageGroupId: `ep_${run}`,
        MessageDeduplicationId: `wh_${run}_${index + 1}`,
      });
    }
  });

  it('fails for good when the topic does not exist', async () => {
    const report = await adapter.deliver(
      message(1),
      target(`arn:aws:sns:${region}:123456789012:hookbase-${run}-missing`),
    );
    expect(report.outcome).toMatchObject({ kind: 'failed', status: 404 });
    expect(report.outcome.kind === 'failed' && report.outcome.error).toMatch(/^NotFound/);
  });

  it('retries, quickly, when the service cannot be reached', async () => {
    const port = await unusedPort();
    const started = Date.now();
    const report = await adapter.deliver(
      message(1),
      target(`arn:aws:sns:${region}:123456789012:anything`, `http://127.0.0.1:${port}`),
    );
    expect(report.outcome).toMatchObject({
      kind: 'retry',
      error: expect.stringMatching(/^network: .*ECONNREFUSED/),
    });
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});
