import { Agent } from 'node:http';
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { s3EndpointPrefix } from './cloud-sighting';
import { now } from '../core/clock';
import { eachLimited } from '../core/concurrency';
import { EndpointRequest } from '../core/hookbase-api';
import { MOTO_REGION, motoCredentials } from './moto-lease';
import { E2eKind } from '../core/options';

export type CloudKind = Exclude<E2eKind, 'http'>;

/** SDK clients for moto, with enough sockets for every reader loop and the setup. */
export function motoClients(url: string, sockets: number): { sqs: SQSClient; s3: S3Client } {
  const common = {
    region: MOTO_REGION,
    endpoint: url,
    credentials: motoCredentials(),
    maxAttempts: 2,
    requestHandler: {
      httpAgent: new Agent({ keepAlive: true, maxSockets: sockets }),
      connectionTimeout: 2_000,
      requestTimeout: 15_000,
    },
  };
  return { sqs: new SQSClient(common), s3: new S3Client({ ...common, forcePathStyle: true }) };
}

/** Standard queues `<name>-<i>`, one per endpoint; URLs in endpoint order. */
export async function createQueues(
  sqs: SQSClient,
  name: string,
  count: number,
  onCreated: (done: number) => void,
): Promise<string[]> {
  const urls = new Array<string>(count);
  let done = 0;
  await eachLimited(
    Array.from({ length: count }, (_, i) => `${name}-${i}`),
    8,
    async (queueName, i) => {
      const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: queueName }));
      if (!QueueUrl) throw new Error(`moto created ${queueName} without a URL`);
      urls[i] = QueueUrl;
      onCreated(++done);
    },
  );
  return urls;
}

export async function deleteQueues(sqs: SQSClient, urls: readonly string[]): Promise<void> {
  await eachLimited(urls, 8, async (QueueUrl) => {
    await sqs.send(new DeleteQueueCommand({ QueueUrl })).catch(() => undefined);
  });
}

export async function createBucket(s3: S3Client, bucket: string): Promise<void> {
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
}

/** Deletes every object (what the reader did not get to) and then the bucket. */
export async function deleteBucket(s3: S3Client, bucket: string): Promise<void> {
  for (let pass = 0; pass < 1000; pass++) {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, MaxKeys: 1000 }));
    const keys = (page.Contents ?? []).flatMap((o) => (o.Key ? [{ Key: o.Key }] : []));
    if (keys.length === 0) break;
    await s3.send(
      new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys, Quiet: true } }),
    );
  }
  await s3.send(new DeleteBucketCommand({ Bucket: bucket }));
}

/** The endpoint body for endpoint `index` of a cloud kind, delivering into moto. */
export function cloudEndpointRequest(
  kind: CloudKind,
  motoUrl: string,
  target: { queueUrl?: string; bucket?: string; root?: string },
  index: number,
  retry: EndpointRequest['retry'],
): EndpointRequest {
  const common = { region: MOTO_REGION, endpoint: motoUrl, credentials: motoCredentials() };
  const config =
    kind === 'sqs'
      ? { ...common, queueUrl: target.queueUrl }
      : { ...common, bucket: target.bucket, prefix: s3EndpointPrefix(target.root ?? '', index) };
  return { kind, config, retry };
}

/**
 * moto's own rate for the call Hookbase makes per delivery (SendMessage or PutObject of a body the
 * size of the bench's payload), from the bench with `concurrency` calls in flight for `seconds`,
 * on a scratch queue or prefix removed afterwards: what the moto side can take on this machine.
 */
export async function motoBound(options: {
  kind: CloudKind;
  clients: { sqs: SQSClient; s3: S3Client };
  name: string;
  bucket: string;
  bodyBytes: number;
  seconds: number;
  concurrency: number;
}): Promise<{ callsPerSecond: number; calls: number; errors: number }> {
  const { kind, clients, name, bucket } = options;
  const body = JSON.stringify({ s: 0, pad: 'x'.repeat(Math.max(0, options.bodyBytes - 16)) });
  let queueUrl: string | undefined;
  if (kind === 'sqs') {
    queueUrl = (await clients.sqs.send(new CreateQueueCommand({ QueueName: `${name}-bound` })))
      .QueueUrl;
  }
  const keys: string[] = [];
  let calls = 0;
  let errors = 0;
  const started = now();
  const until = started + options.seconds * 1000;
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      while (now() < until) {
        try {
          if (kind === 'sqs') {
            await clients.sqs.send(
              new SendMessageCommand({
                QueueUrl: queueUrl,
                MessageBody: body,
                MessageAttributes: {
                  'webhook-id': { DataType: 'String', StringValue: `b${calls}` },
                },
              }),
            );
          } else {
            const key = `${name}-bound/${calls}.json`;
            await clients.s3.send(
              new PutObjectCommand({
                Bucket: bucket,
                Key: key,
                Body: body,
                ContentType: 'application/json',
                Metadata: { 'webhook-id': `b${calls}` },
              }),
            );
            keys.push(key);
          }
          calls++;
        } catch {
          errors++;
        }
      }
    }),
  );
  const elapsed = now() - started;
  if (queueUrl) await clients.sqs.send(new DeleteQueueCommand({ QueueUrl: queueUrl }));
  for (let i = 0; i < keys.length; i += 1000) {
    await clients.s3.send(
      new DeleteObjectsCommand({
        Bucket: bucket,
        Delete: { Objects: keys.slice(i, i + 1000).map((Key) => ({ Key })), Quiet: true },
      }),
    );
  }
  return { callsPerSecond: (calls * 1000) / elapsed, calls, errors };
}
