import { randomBytes } from 'node:crypto';
import { CreateQueueCommand, Message, SQSClient } from '@aws-sdk/client-sqs';
import {
  emulatorAwsCredentials,
  EMULATOR_SETUP_TIMEOUT_MS,
  ensureMoto,
  pollUntil,
  TcpProxy,
  receiveExactly,
} from '@hookbase/testing';
import { CloudE2e, QUICK_RETRY, sentOneAtATime, startCloudE2e } from './cloud-e2e';

/**
 * SQS endpoints end to end: events published to Hookbase (POST /v1/events) arrive in a queue of
 * moto's server, read back with the AWS SDK; FIFO endpoints into a FIFO queue in order; an outage
 * of the service is retried through; a queue that does not exist is a permanent failure.
 */
describe('SQS endpoints (moto)', () => {
  const region = 'us-east-1';
  const run = randomBytes(4).toString('hex');
  let moto: Awaited<ReturnType<typeof ensureMoto>> | undefined;
  let sqs: SQSClient;
  let e2e: CloudE2e;
  let motoPort: number;

  const attributesOf = (message: Message) =>
    Object.fromEntries(
      Object.entries(message.MessageAttributes ?? {}).map(([name, value]) => [
        name,
        value.StringValue,
      ]),
    );

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

  const receive = (queueUrl: string, count: number) => receiveExactly(sqs, queueUrl, count);

  const config = (queueUrl: string, endpoint = moto!.url) => ({
    region,
    queueUrl,
    endpoint,
    credentials: emulatorAwsCredentials(),
  });

  beforeAll(async () => {
    moto = await ensureMoto();
    motoPort = Number(new URL(moto.url).port);
    sqs = new SQSClient({ region, endpoint: moto.url, credentials: emulatorAwsCredentials() });
    e2e = await startCloudE2e();
  }, EMULATOR_SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await e2e?.stop();
    sqs?.destroy();
    await moto?.release();
  });

  it('delivers published events with their body and attributes; credentials are kept encrypted and never shown', async () => {
    const queueUrl = await createQueue(`e2e-${run}-standard`);
    const endpointId = await e2e.endpoint({
      kind: 'sqs',
      config: config(queueUrl),
      eventTypes: ['order.created'],
    });

    const shown = (await e2e.client.get(`${e2e.org}/webhook-endpoints/${endpointId}`)).body.data;
    expect(shown.credentials).toEqual({ configured: true });
    expect(shown.config).toEqual({ region, queueUrl, endpoint: moto!.url });
    const stored = JSON.stringify(await e2e.storedConfig(endpointId));
    expect(stored).not.toContain(emulatorAwsCredentials().secretAccessKey);
    expect(stored).not.toContain(emulatorAwsCredentials().accessKeyId);

    const eventIds = [
      await e2e.publish('order.created', { n: 1, total: 12.5 }),
      await e2e.publish('order.created', { n: 2, total: 7 }),
    ];
    const messageIds = await Promise.all(
      eventIds.map(async (eventId) => (await e2e.messageOf(eventId, endpointId)).id),
    );
    const received = await receive(queueUrl, 2);
    const byN = new Map(received.map((m) => [JSON.parse(m.Body!).n as number, m]));
    expect(JSON.parse(byN.get(1)!.Body!)).toEqual({ n: 1, total: 12.5 });
    expect(JSON.parse(byN.get(2)!.Body!)).toEqual({ n: 2, total: 7 });
    for (const [index, n] of [1, 2].entries()) {
      expect(attributesOf(byN.get(n)!)).toEqual({
        'webhook-id': messageIds[index],
        'hookbase-message-id': messageIds[index],
        'hookbase-event-id': eventIds[index],
        'hookbase-event-type': 'order.created',
        'hookbase-attempt': '1',
      });
    }
    for (const eventId of eventIds) {
      const [attempt] = await e2e.delivered(eventId, endpointId);
      expect(attempt).toMatchObject({ outcome: 'succeeded', responseStatus: 200 });
    }
  });

  it('refuses an invalid config naming the field; keeps or replaces credentials on PATCH, and refuses to drop them or move them to another target', async () => {
    const invalid = await e2e.client.post(`${e2e.org}/webhook-endpoints`, {
      kind: 'sqs',
      config: { region: 'mars', queueUrl: 'https://example.com/not-a-queue' },
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.code).toBe('VALIDATION_FAILED');
    expect(invalid.body.error.details.issues.map((i: { path: string }) => i.path).sort()).toEqual([
      'config.queueUrl',
      'config.region',
    ]);

    const queueUrl = await createQueue(`e2e-${run}-patched`);
    const endpointId = await e2e.endpoint({ kind: 'sqs', config: config(queueUrl) });
    const path = `${e2e.org}/webhook-endpoints/${endpointId}`;
    const envelope = async () => (await e2e.storedConfig(endpointId)).encryptedCredentials;
    const first = await envelope();
    expect(typeof first).toBe('string');

    // A GET's config PATCHed back as is keeps the stored credentials.
    const shown = (await e2e.client.get(path)).body.data;
    const kept = await e2e.client.patch(path, { config: shown.config });
    expect(kept.status).toBe(200);
    expect(kept.body.data.credentials).toEqual({ configured: true });
    expect(await envelope()).toBe(first);

    const replaced = await e2e.client.patch(path, {
      config: { ...shown.config, credentials: { ...emulatorAwsCredentials(), sessionToken: 't' } },
    });
    expect(replaced.body.data.credentials).toEqual({ configured: true });
    expect(await envelope()).not.toBe(first);

    // Removing them would leave the host's identity towards a tenant-chosen endpoint override.
    const removed = await e2e.client.patch(path, {
      config: { ...shown.config, credentials: null },
    });
    expect(removed.status).toBe(400);
    expect(removed.body.error.code).toBe('CREDENTIALS_REQUIRED');
    const replacedEnvelope = await envelope();
    expect(typeof replacedEnvelope).toBe('string');

    // Stored credentials stay bound to their target: a new endpoint or queue needs them again.
    for (const change of [
      { endpoint: 'http://127.0.0.1:9' },
      { queueUrl: `${shown.config.queueUrl}-other` },
      { region: 'eu-west-1' },
    ]) {
      const moved = await e2e.client.patch(path, { config: { ...shown.config, ...change } });
      expect(moved.status).toBe(400);
      expect(moved.body.error).toMatchObject({
        code: 'CREDENTIALS_TARGET_CHANGED',
        message: expect.stringContaining(`config.${Object.keys(change)[0]}`),
      });
    }
    expect((await e2e.client.get(path)).body.data.config).toEqual(shown.config);
    expect(await envelope()).toBe(replacedEnvelope);
    const movedWithCredentials = await e2e.client.patch(path, {
      config: { ...shown.config, region: 'eu-west-1', credentials: emulatorAwsCredentials() },
    });
    expect(movedWithCredentials.status).toBe(200);
    expect(movedWithCredentials.body.data.config.region).toBe('eu-west-1');
  });

  it('delivers a FIFO endpoint into a FIFO queue in publish order, one message group', async () => {
    const queueUrl = await createQueue(`e2e-${run}-ordered.fifo`);
    const endpointId = await e2e.endpoint({
      kind: 'sqs',
      config: config(queueUrl),
      eventTypes: ['order.fifo'],
      fifoEnabled: true,
    });
    const count = 12;
    const eventIds: string[] = [];
    for (let n = 1; n <= count; n++) eventIds.push(await e2e.publish('order.fifo', { n }));

    const received = await receive(queueUrl, count);
    expect(received.map((m) => JSON.parse(m.Body!).n)).toEqual(
      Array.from({ length: count }, (_, i) => i + 1),
    );
    expect(new Set(received.map((m) => m.Attributes?.MessageGroupId))).toEqual(
      new Set([endpointId]),
    );
    const attempts = (
      await Promise.all(eventIds.map((eventId) => e2e.delivered(eventId, endpointId)))
    ).flat();
    expect(sentOneAtATime(attempts)).toBe(true);
  });

  it('retries while the service is unreachable and delivers once it is back', async () => {
    const queueUrl = await createQueue(`e2e-${run}-outage`);
    const proxy = new TcpProxy('127.0.0.1', motoPort);
    const proxyPort = await proxy.start();
    try {
      const endpointId = await e2e.endpoint({
        kind: 'sqs',
        config: config(queueUrl, `http://127.0.0.1:${proxyPort}`),
        eventTypes: ['order.outage'],
        retry: QUICK_RETRY,
      });
      await e2e.delivered(await e2e.publish('order.outage', { n: 1 }), endpointId);

      await proxy.cut();
      const eventId = await e2e.publish('order.outage', { n: 2 });
      const { id } = await e2e.messageOf(eventId, endpointId);
      await pollUntil(
        async () => (await e2e.attemptsOf(id)).filter((a) => a.outcome === 'retry').length >= 2,
        { description: 'two attempts retried during the outage' },
      );
      await proxy.restore();

      const attempts = await e2e.delivered(eventId, endpointId);
      expect(attempts.at(-1)).toMatchObject({ outcome: 'succeeded' });
      expect(attempts.slice(0, -1).every((a) => a.outcome === 'retry')).toBe(true);
      expect(attempts[0].error).toMatch(/^network: /);
      const received = await receive(queueUrl, 2);
      expect(received.map((m) => JSON.parse(m.Body!).n).sort()).toEqual([1, 2]);
      expect(attributesOf(received.find((m) => JSON.parse(m.Body!).n === 2)!)).toMatchObject({
        'hookbase-attempt': String(attempts.length),
      });
    } finally {
      await proxy.stop();
    }
  });

  it('dead-letters a message for a queue that does not exist as permanent_failure', async () => {
    const missing = `${moto!.url}/123456789012/e2e-${run}-missing`;
    const endpointId = await e2e.endpoint({
      kind: 'sqs',
      config: config(missing),
      eventTypes: ['order.lost'],
      retry: QUICK_RETRY,
    });
    const eventId = await e2e.publish('order.lost', { n: 1 });
    const { id } = await e2e.messageOf(eventId, endpointId);
    const [entry] = await pollUntil(
      async () => {
        const entries = await e2e.dlqEntries(endpointId);
        return entries.length > 0 ? entries : false;
      },
      { description: 'the DLQ entry' },
    );
    expect(entry).toMatchObject({ messageId: id, reason: 'permanent_failure' });
    expect(entry.lastError).toMatch(/QueueDoesNotExist|NonExistentQueue/);
    // Failed for good on the first attempt, whatever the retry schedule.
    expect(await e2e.attemptsOf(id)).toHaveLength(1);
  });
});
