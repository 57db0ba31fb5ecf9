import { randomBytes } from 'node:crypto';
import {
  CreateBucketCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import { OutboundMessage, S3DestinationAdapter, s3ObjectKey } from '@hookbase/destinations';
import {
  emulatorAwsCredentials,
  EMULATOR_SETUP_TIMEOUT_MS,
  ensureMoto,
  unusedPort,
} from '@hookbase/testing';

/** The S3 adapter against moto's server: one object per message, and what failures become. */
describe('S3DestinationAdapter (moto)', () => {
  const region = 'us-east-1';
  const run = randomBytes(4).toString('hex');
  const bucket = `hookbase-${run}`;
  let moto: Awaited<ReturnType<typeof ensureMoto>> | undefined;
  let s3: S3Client;
  let adapter: S3DestinationAdapter;

  const message = (n: number): OutboundMessage => ({
    messageId: `msg_${run}_${n}`,
    webhookId: `msg_${run}_${n}`,
    eventId: `evt_${run}_${n}`,
    eventType: 'invoice.paid',
    payload: { n, amount: 12.5 },
    attemptNumber: 2,
  });
  const target = (config: Record<string, unknown> = {}) => ({
    endpointId: `ep_${run}`,
    kind: 's3' as const,
    url: null,
    config: {
      region,
      bucket,
      prefix: 'hooks/',
      endpoint: moto!.url,
      credentials: emulatorAwsCredentials(),
      ...config,
    },
    secrets: [],
  });

  beforeAll(async () => {
    moto = await ensureMoto();
    s3 = new S3Client({
      region,
      endpoint: moto.url,
      forcePathStyle: true,
      credentials: emulatorAwsCredentials(),
    });
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    adapter = new S3DestinationAdapter({
      timeoutMs: 5_000,
      connectTimeoutMs: 2_000,
      allowPrivateTargets: true,
    });
  }, EMULATOR_SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await adapter?.close();
    s3?.destroy();
    await moto?.release();
  });

  it('writes one JSON object per message under <prefix><eventType>/<messageId>.json', async () => {
    for (const n of [1, 2]) {
      const report = await adapter.deliver(message(n), target());
      expect(report.outcome).toEqual({ kind: 'succeeded', status: 200 });
      expect(JSON.parse(report.responseExcerpt!)).toMatchObject({
        Key: `hooks/invoice.paid/msg_${run}_${n}.json`,
      });
    }
    expect(s3ObjectKey('hooks/', message(1))).toBe(`hooks/invoice.paid/msg_${run}_1.json`);

    const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'hooks/' }));
    expect(listed.Contents?.map((object) => object.Key).sort()).toEqual([
      `hooks/invoice.paid/msg_${run}_1.json`,
      `hooks/invoice.paid/msg_${run}_2.json`,
    ]);

    const object = await s3.send(
      new GetObjectCommand({ Bucket: bucket, Key: `hooks/invoice.paid/msg_${run}_1.json` }),
    );
    expect(JSON.parse(await object.Body!.transformToString())).toEqual({ n: 1, amount: 12.5 });
    expect(object.ContentType).toBe('application/json');
    expect(object.Metadata).toEqual({
      'webhook-id': `msg_${run}_1`,
      'hookbase-message-id': `msg_${run}_1`,
      'hookbase-event-id': `evt_${run}_1`,
      'hookbase-event-type': 'invoice.paid',
      'hookbase-attempt': '2',
    });
  });

  it('fails for good when the bucket does not exist', async () => {
    const report = await adapter.deliver(message(1), target({ bucket: `${bucket}-missing` }));
    expect(report.outcome).toMatchObject({
      kind: 'failed',
      status: 404,
      error: expect.stringMatching(/^NoSuchBucket/),
    });
  });

  it('retries, quickly, when the service cannot be reached', async () => {
    const port = await unusedPort();
    const started = Date.now();
    const report = await adapter.deliver(
      message(1),
      target({ endpoint: `http://127.0.0.1:${port}` }),
    );
    expect(report.outcome).toMatchObject({
      kind: 'retry',
      error: expect.stringMatching(/^network: .*ECONNREFUSED/),
    });
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});
