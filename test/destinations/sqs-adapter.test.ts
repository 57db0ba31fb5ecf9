import { randomBytes } from 'node:crypto';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { OutboundMessage, SqsDestinationAdapter } from '@hookbase/destinations';
import {
  emulatorAwsCredentials,
  EMULATOR_SETUP_TIMEOUT_MS,
  ensureMoto,
  unusedPort,
  receiveFromQueue,
  stubResolver,
} from '@hookbase/testing';

/** The SQS adapter against moto's server: what arrives, and what each failure becomes. */
describe('SqsDestinationAdapter (moto)', () => {
  const region = 'us-east-1';
  const run = randomBytes(4).toString('hex');
  let moto: Awaited<ReturnType<typeof ensureMoto>> | undefined;
  let sqs: SQSClient;
  let adapter: SqsDestinationAdapter;

  const message = (n: number): OutboundMessage => ({
    messageId: `msg_${run}_${n}`,
    webhookId: `msg_${run}_${n}`,
    eventId: `evt_${run}_${n}`,
    eventType: 'order.created',
    payload: { n, text: 'héllo' },
    attemptNumber: 1,
  });
  const target = (queueUrl: string, endpoint = moto!.url) => ({
    endpointId: `ep_${run}`,
    kind: 'sqs' as const,
    url: null,
    config: { region, queueUrl, endpoint, credentials: emulatorAwsCredentials() },
    secrets: [],
  });

  async function createQueue(name: string): Promise<string> {
    const fifo = name.endsWith('.fifo');
    const { QueueUrl } = await sqs.send(
      new CreateQueueCommand({
        QueueName: name,
        Attributes: fifo ? { FifoQueue: 'true', ContentBasedDeduplication: 'false' } : {},
      }),
    );
    return QueueUrl!;
  }

  /** Messages in the queue (deliver has returned: whatever it sent is there). */
  const queued = async (queueUrl: string) => {
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: queueUrl,
        AttributeNames: ['ApproximateNumberOfMessages'],
      }),
    );
    return Number(Attributes?.ApproximateNumberOfMessages);
  };

  const receiveAll = (queueUrl: string, expected: number, timeoutMs = 10_000) =>
    receiveFromQueue(sqs, queueUrl, expected, timeoutMs);

  beforeAll(async () => {
    moto = await ensureMoto();
    sqs = new SQSClient({ region, endpoint: moto.url, credentials: emulatorAwsCredentials() });
    adapter = new SqsDestinationAdapter({
      timeoutMs: 5_000,
      connectTimeoutMs: 2_000,
      allowPrivateTargets: true,
    });
  }, EMULATOR_SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await adapter?.close();
    sqs?.destroy();
    await moto?.release();
  });

  it('sends the payload as the body with the delivery attributes to a standard queue', async () => {
    const queueUrl = await createQueue(`hookbase-${run}-standard`);
    const report = await adapter.deliver(message(1), target(queueUrl));
    expect(report.outcome).toEqual({ kind: 'succeeded', status: 200 });
    expect(JSON.parse(report.responseExcerpt!)).toEqual({ MessageId: expect.any(String) });

    const [received] = await receiveAll(queueUrl, 1);
    expect(JSON.parse(received.Body!)).toEqual({ n: 1, text: 'héllo' });
    const attributes = Object.fromEntries(
      Object.entries(received.MessageAttributes ?? {}).map(([name, value]) => [
        name,
        value.StringValue,
      ]),
    );
    expect(attributes).toEqual({
      'webhook-id': `msg_${run}_1`,
      'hookbase-message-id': `msg_${run}_1`,
      'hookbase-event-id': `evt_${run}_1`,
      'hookbase-event-type': 'order.created',
      'hookbase-attempt': '1',
    });
    // A standard queue gets no FIFO ids.
    expect(received.Attributes?.MessageGroupId).toBeUndefined();
  });

  it('sets the endpoint as message group and the webhook id as deduplication id on a FIFO queue', async () => {
    const queueUrl = await createQueue(`hookbase-${run}-ordered.fifo`);
    for (const n of [1, 2, 3]) {
      const report = await adapter.deliver(message(n), target(queueUrl));
      expect(report.outcome).toEqual({ kind: 'succeeded', status: 200 });
    }
    // A retry of message 2 (same webhook id) is deduplicated by SQS, not delivered twice.
    const retried = await adapter.deliver({ ...message(2), attemptNumber: 2 }, target(queueUrl));
    expect(retried.outcome.kind).toBe('succeeded');

    const received = await receiveAll(queueUrl, 3);
    expect(received.map((m) => JSON.parse(m.Body!).n)).toEqual([1, 2, 3]);
    for (const [index, m] of received.entries()) {
      expect(m.Attributes).toMatchObject({
        MessageGroupId: `ep_${run}`,
        MessageDeduplicationId: `msg_${run}_${index + 1}`,
      });
    }
    // Nothing more: the retry was a duplicate.
    expect(await receiveAll(queueUrl, 1, 1_000)).toEqual([]);
  });

  it('fails for good when the queue does not exist', async () => {
    const report = await adapter.deliver(
      message(1),
      target(`${moto!.url}/123456789012/hookbase-${run}-missing`),
    );
    expect(report.outcome).toMatchObject({
      kind: 'failed',
      status: 400,
      error: expect.stringMatching(/NonExistentQueue|QueueDoesNotExist/),
    });
  });

  it('retries, quickly, when the service cannot be reached', async () => {
    const port = await unusedPort();
    const started = Date.now();
    const report = await adapter.deliver(
      message(1),
      target(`http://127.0.0.1:${port}/123456789012/q`, `http://127.0.0.1:${port}`),
    );
    expect(report.outcome).toMatchObject({
      kind: 'retry',
      error: expect.stringMatching(/^network: .*ECONNREFUSED/),
    });
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('refuses an endpoint override on a private address when private targets are not allowed', async () => {
    const strict = new SqsDestinationAdapter({
      timeoutMs: 5_000,
      connectTimeoutMs: 2_000,
      allowPrivateTargets: false,
    });
    const report = await strict.deliver(
      message(1),
      target(`${moto!.url}/123456789012/hookbase-${run}-standard`),
    );
    await strict.close();
    expect(report.outcome).toMatchObject({
      kind: 'failed',
      error: expect.stringMatching(/private, loopback or link-local/),
    });
  });

  it('fails for good, without sending, when the config is invalid', async () => {
    const report = await adapter.deliver(message(1), {
      ...target('not a url'),
      config: { region },
    });
    expect(report.outcome).toMatchObject({
      kind: 'failed',
      error: expect.stringMatching(/^Invalid sqs config: config\.queueUrl/),
    });
  });

  it('fails for good, without retrying or naming the address, a name that resolves inside when connecting', async () => {
    const motoPort = new URL(moto!.url).port;
    const resolver = stubResolver({ 'sqs.rebinding.test': ['127.0.0.1'] });
    const strict = new SqsDestinationAdapter({
      timeoutMs: 5_000,
      connectTimeoutMs: 2_000,
      allowPrivateTargets: false,
      resolver,
    });
    try {
      const queueUrl = await createQueue(`hookbase-${run}-rebinding`);
      const report = await strict.deliver(
        message(1),
        target(queueUrl, `http://sqs.rebinding.test:${motoPort}`),
      );
      expect(resolver.asked).toContain('sqs.rebinding.test');
      expect(report.outcome).toEqual({
        kind: 'failed',
        error: expect.stringMatching(
          /^sqs\.rebinding\.test resolves to a private, loopback or link-local address/,
        ),
      });
      expect(report.outcome.kind !== 'succeeded' && report.outcome.error).not.toContain(
        '127.0.0.1',
      );
      expect(await queued(queueUrl)).toBe(0);
    } finally {
      await strict.close();
    }
  });

  it("refuses, before sending, a target without credentials unless the organization's grant covers it", async () => {
    const queueUrl = await createQueue(`hookbase-${run}-no-credentials`);
    const withoutCredentials: Record<string, unknown> = { ...target(queueUrl).config };
    delete withoutCredentials.credentials;
    const bare = { ...target(queueUrl), config: withoutCredentials };
    expect((await adapter.deliver(message(1), bare)).outcome).toEqual({
      kind: 'failed',
      error:
        'config.credentials is required with config.endpoint: the host identity is never used towards an endpoint override',
    });
    expect(
      (await adapter.deliver(message(1), { ...bare, hostIdentity: {} })).outcome,
    ).toMatchObject({
      kind: 'failed',
      error: expect.stringMatching(/never used towards an endpoint override/),
    });
    expect(await queued(queueUrl)).toBe(0);
  });
});
