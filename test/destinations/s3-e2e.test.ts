import { randomBytes } from 'node:crypto';
import {
  CreateBucketCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import {
  emulatorAwsCredentials,
  EMULATOR_SETUP_TIMEOUT_MS,
  ensureMoto,
  pollUntil,
  TcpProxy,
} from '@hookbase/testing';
import { CloudE2e, QUICK_RETRY, sentInPublishOrder, startCloudE2e } from './cloud-e2e';

/**
 * S3 endpoints end to end against moto: one JSON object per message under
 * `<prefix><eventType>/<messageId>.json`, with the delivery attributes as metadata. A FIFO
 * endpoint's order is Hookbase's (one PutObject at a time, in publish order): S3 has no order.
 */
describe('S3 endpoints (moto)', () => {
  const region = 'us-east-1';
  const run = randomBytes(4).toString('hex');
  const bucket = `e2e-${run}`;
  let moto: Awaited<ReturnType<typeof ensureMoto>> | undefined;
  let s3: S3Client;
  let e2e: CloudE2e;

  const config = (prefix: string, options: { endpoint?: string; bucket?: string } = {}) => ({
    region,
    bucket: options.bucket ?? bucket,
    prefix,
    endpoint: options.endpoint ?? moto!.url,
    credentials: emulatorAwsCredentials(),
  });

  const keysUnder = async (prefix: string) =>
    ((await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }))).Contents ?? [])
      .map((object) => object.Key!)
      .sort();

  const objectAt = async (key: string) => {
    const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    return {
      body: JSON.parse(await object.Body!.transformToString()),
      contentType: object.ContentType,
      metadata: object.Metadata,
    };
  };

  beforeAll(async () => {
    moto = await ensureMoto();
    s3 = new S3Client({
      region,
      endpoint: moto.url,
      forcePathStyle: true,
      credentials: emulatorAwsCredentials(),
    });
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    e2e = await startCloudE2e();
  }, EMULATOR_SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await e2e?.stop();
    s3?.destroy();
    await moto?.release();
  });

  it('writes each published event as a JSON object with the delivery metadata', async () => {
    const endpointId = await e2e.endpoint({
      kind: 's3',
      config: config('hooks/'),
      eventTypes: ['invoice.paid'],
    });
    const shown = (await e2e.client.get(`${e2e.org}/webhook-endpoints/${endpointId}`)).body.data;
    expect(shown.config).toEqual({ region, bucket, prefix: 'hooks/', endpoint: moto!.url });
    expect(shown.credentials).toEqual({ configured: true });

    const eventId = await e2e.publish('invoice.paid', { amount: 12.5 });
    const { id: messageId } = await e2e.messageOf(eventId, endpointId);
    await e2e.delivered(eventId, endpointId);
    const key = `hooks/invoice.paid/${messageId}.json`;
    expect(await keysUnder('hooks/')).toEqual([key]);
    expect(await objectAt(key)).toEqual({
      body: { amount: 12.5 },
      contentType: 'application/json',
      metadata: {
        'webhook-id': messageId,
        'hookbase-message-id': messageId,
        'hookbase-event-id': eventId,
        'hookbase-event-type': 'invoice.paid',
        'hookbase-attempt': '1',
      },
    });
  });

  it('writes a FIFO endpoint one object at a time, in publish order', async () => {
    const endpointId = await e2e.endpoint({
      kind: 's3',
      config: config('fifo/'),
      eventTypes: ['invoice.fifo'],
      fifoEnabled: true,
    });
    const count = 10;
    const eventIds: string[] = [];
    for (let n = 1; n <= count; n++) eventIds.push(await e2e.publish('invoice.fifo', { n }));

    const perEvent = await Promise.all(eventIds.map((id) => e2e.delivered(id, endpointId)));
    expect(sentInPublishOrder(perEvent)).toBe(true);
    const keys = await keysUnder('fifo/');
    expect(keys).toHaveLength(count);
    const bodies = await Promise.all(keys.map(async (key) => (await objectAt(key)).body.n));
    expect(bodies.sort((a, b) => a - b)).toEqual(Array.from({ length: count }, (_, i) => i + 1));
  });

  it('retries while the service is unreachable and delivers once it is back', async () => {
    const proxy = new TcpProxy('127.0.0.1', Number(new URL(moto!.url).port));
    const proxyPort = await proxy.start();
    try {
      const endpointId = await e2e.endpoint({
        kind: 's3',
        config: config('outage/', { endpoint: `http://127.0.0.1:${proxyPort}` }),
        eventTypes: ['invoice.outage'],
        retry: QUICK_RETRY,
      });
      await e2e.delivered(await e2e.publish('invoice.outage', { n: 1 }), endpointId);

      await proxy.cut();
      const eventId = await e2e.publish('invoice.outage', { n: 2 });
      const { id } = await e2e.messageOf(eventId, endpointId);
      await pollUntil(
        async () => (await e2e.attemptsOf(id)).filter((a) => a.outcome === 'retry').length >= 2,
        { description: 'two attempts retried during the outage' },
      );
      await proxy.restore();

      const attempts = await e2e.delivered(eventId, endpointId);
      expect(attempts.slice(0, -1).every((a) => a.outcome === 'retry')).toBe(true);
      expect(attempts[0].error).toMatch(/^network: /);
      const key = `outage/invoice.outage/${id}.json`;
      expect(await keysUnder('outage/')).toContain(key);
      expect((await objectAt(key)).metadata).toMatchObject({
        'hookbase-attempt': String(attempts.length),
      });
    } finally {
      await proxy.stop();
    }
  });

  it('dead-letters a message for a bucket that does not exist as permanent_failure', async () => {
    const endpointId = await e2e.endpoint({
      kind: 's3',
      config: config('lost/', { bucket: `${bucket}-missing` }),
      eventTypes: ['invoice.lost'],
      retry: QUICK_RETRY,
    });
    const eventId = await e2e.publish('invoice.lost', { n: 1 });
    const { id } = await e2e.messageOf(eventId, endpointId);
    const [entry] = await pollUntil(
      async () => {
        const entries = await e2e.dlqEntries(endpointId);
        return entries.length > 0 ? entries : false;
      },
      { description: 'the DLQ entry' },
    );
    expect(entry).toMatchObject({ messageId: id, reason: 'permanent_failure' });
    expect(entry.lastError).toMatch(/NoSuchBucket/);
    expect(await e2e.attemptsOf(id)).toHaveLength(1);
  });
});
