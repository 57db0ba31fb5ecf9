import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { setMaxListeners } from 'node:events';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteQueueCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectsCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import { now } from '../core/util';
import { eachLimited } from '../core/util';
import { EndpointRequest } from '../core/hookbase-api';
import { LedgerSink } from '../core/ledger';
import { ROOT } from '../core/util';
import { fmtMs } from '../core/report';
import { distribution } from '../core/stats';
import { benchPayload } from './publisher';

/**
 * Cloud endpoints in moto for e2e --kind sqs|s3: the moto lease, the run's queues (one per
 * endpoint) or bucket (a prefix per endpoint), the endpoints' configuration, and the readers that see each delivery and write it to the ledger.
 */
export type CloudKind = 'sqs' | 's3';

const REGION = 'us-east-1';
/** moto answers with any credentials; the SDKs insist on some. */
const credentials = () => ({
  accessKeyId: 'AKIAHOOKBASEBENCHKEY',
  secretAccessKey: 'hookbase-bench-secret',
});

export interface MotoLease {
  url: string;
  /** Whether this bench started moto (it then stops when the last lease is given back). */
  startedByUs: boolean;
  release(): Promise<void>;
}

function runLease(command: 'acquire' | 'release', timeoutMs: number): Promise<string> {
  const script = join(ROOT, 'scripts', 'lib', 'moto.mjs');
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [script, command, String(process.pid)],
      { cwd: ROOT, timeout: Math.round(timeoutMs), maxBuffer: 4 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error)
          reject(new Error(`moto.mjs ${command} failed: ${stderr.trim() || error.message}`));
        else resolve(stdout.trim().split('\n').at(-1) ?? '');
      },
    );
  });
}

/**
 * moto's server, through scripts/lib/moto.mjs's leases (as the test files take it): reused when
 * it already answers, started otherwise (installed into .cache on first use); it stops when the
 * lease that started it is given back and no other holder is left.
 */
export async function acquireMoto(timeoutMs: number): Promise<MotoLease> {
  const line = await runLease('acquire', timeoutMs);
  let result: { url?: unknown; startedByUs?: unknown } = {};
  try {
    result = JSON.parse(line) as typeof result;
  } catch {
    // reported below
  }
  if (typeof result.url !== 'string') throw new Error(`moto.mjs acquire printed no url: ${line}`);
  let released = false;
  return {
    url: result.url,
    startedByUs: result.startedByUs === true,
    release: async () => {
      if (!released) await runLease('release', 30_000);
      released = true;
    },
  };
}

/** The bench sequence number (`s`) of a delivered payload, or undefined when it has none. */
export function benchSequence(body: string | undefined): number | undefined {
  try {
    const seq = (JSON.parse(body ?? '') as { s?: unknown } | null)?.s;
    return typeof seq === 'number' && Number.isInteger(seq) && seq >= 0 ? seq : undefined;
  } catch {
    return undefined;
  }
}

/** The S3 prefix of endpoint `index`: `<root>e<index>/`. */
export function s3EndpointPrefix(root: string, index: number): string {
  return `${root}e${index}/`;
}

/**
 * The endpoint and message of a key Hookbase's S3 adapter wrote under `root`
 * (`<prefix><eventType>/<messageId>.json`), or undefined.
 */
export function parseS3Key(root: string, key: string) {
  if (!key.startsWith(root)) return undefined;
  const match = /^e(\d{1,7})\/([^/]+)\/([^/]+)\.json$/.exec(key.slice(root.length));
  if (!match) return undefined;
  return { endpoint: Number(match[1]), eventType: match[2], messageId: match[3] };
}

/**
 * The S3 ETag (MD5 of the body, quoted) of each planned event's body, so a listing alone names
 * the event: the adapter writes `JSON.stringify(payload)`, and moto is not asked for 1,000 GETs.
 */
export class BodyDigests {
  private readonly bySum = new Map<string, number>();

  constructor(events: number, payloadBytes: number) {
    for (let seq = 0; seq < events; seq++) {
      const body = JSON.stringify(benchPayload(seq, payloadBytes));
      this.bySum.set(createHash('md5').update(body).digest('hex'), seq);
    }
  }

  seqOf(etag: string | undefined): number | undefined {
    return etag ? this.bySum.get(etag.replace(/^"|"$/g, '').toLowerCase()) : undefined;
  }
}

/**
 * A reader's loops and counts: each delivery is counted once (an SQS message received again,
 * an S3 key listed again before its delete went through, is the same delivery), at the time the
 * response that first showed it arrived.
 */
class Reader {
  readonly stats = { calls: 0, empty: 0, counted: 0, repeats: 0, unnamed: 0, errors: 0, error: '' };
  /** SQS: first seen − SentTimestamp; S3: ms between sweeps. */
  readonly delays: number[] = [];
  readonly abort = new AbortController();
  private readonly seen = new Set<string>();
  private readonly loops: Promise<void>[] = [];
  private stopped = false;

  constructor(private readonly sink: LedgerSink) {
    setMaxListeners(0, this.abort.signal);
  }

  /** Runs `pass` until stopped, pausing `idleMs` after a pass that found nothing. */
  loop(pass: () => Promise<number>, idleMs: number): void {
    const run = async () => {
      while (!this.stopped) {
        try {
          if ((await pass()) === 0 && idleMs > 0) await this.pause(idleMs);
        } catch (error) {
          if (this.stopped) return;
          this.stats.errors++;
          this.stats.error = (error as Error).name || (error as Error).message;
          await this.pause(200);
        }
      }
    };
    this.loops.push(run());
  }

  /** Counts delivery `id` (its sequence number `seq`) to `endpoint`, the first time it is seen. */
  count(id: string, seq: number | undefined, endpoint: number, at: number): boolean {
    if (this.seen.has(id)) {
      this.stats.repeats++;
      return false;
    }
    this.seen.add(id);
    if (seq === undefined) this.stats.unnamed++;
    else {
      this.stats.counted++;
      this.sink.attempt(seq, endpoint, at, true);
    }
    return true;
  }

  pause(ms: number): Promise<void> {
    return delay(ms, undefined, { signal: this.abort.signal }).catch(() => undefined);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    await Promise.all(this.loops);
  }
}

/** Most SQS receive loops at once: one long poll per queue up to this, then loops share queues. */
const MAX_RECEIVE_LOOPS = 100;

/** The cloud side of one e2e run: moto's clients, the queues or bucket, the reader. */
export class CloudRig {
  readonly name: string;
  readonly root: string;
  private readonly sqs: SQSClient;
  private readonly s3: S3Client;
  private queueUrls: string[] = [];
  private bucketMade = false;
  private reader: Reader | undefined;

  constructor(
    readonly kind: CloudKind,
    private readonly motoUrl: string,
    runId: string,
    sockets: number,
  ) {
    const common = {
      region: REGION,
      endpoint: motoUrl,
      credentials: credentials(),
      maxAttempts: 2,
      requestHandler: {
        httpAgent: new Agent({ keepAlive: true, maxSockets: sockets }),
        connectionTimeout: 2_000,
        requestTimeout: 15_000,
      },
    };
    this.sqs = new SQSClient(common);
    this.s3 = new S3Client({ ...common, forcePathStyle: true });
    this.name = `bench-${runId}`;
    this.root = `${this.name}/`;
  }

  /** The queues `<name>-<i>` (sqs) and the bucket. */
  async provision(count: number, onCreated: (done: number) => void): Promise<void> {
    if (this.kind === 'sqs') {
      this.queueUrls = new Array<string>(count);
      let done = 0;
      await eachLimited(this.queueUrls, 8, async (_, i) => {
        const QueueName = `${this.name}-${i}`;
        const { QueueUrl } = await this.sqs.send(new CreateQueueCommand({ QueueName }));
        if (!QueueUrl) throw new Error(`moto created ${QueueName} without a URL`);
        this.queueUrls[i] = QueueUrl;
        onCreated(++done);
      });
    }
    await this.s3.send(new CreateBucketCommand({ Bucket: this.name }));
    this.bucketMade = true;
  }

  /** The endpoint body for endpoint `index`, delivering into its queue or prefix. */
  endpointRequest(index: number, retry: EndpointRequest['retry']): EndpointRequest {
    const common = { region: REGION, endpoint: this.motoUrl, credentials: credentials() };
    const config =
      this.kind === 'sqs'
        ? { ...common, queueUrl: this.queueUrls[index] }
        : { ...common, bucket: this.name, prefix: s3EndpointPrefix(this.root, index) };
    return { kind: this.kind, config, retry };
  }

  /**
   * Starts the reader writing each delivery into `sink`. SQS: one loop per queue long-polls
   * ReceiveMessage (10 a batch, 1 s) and deletes what it got; past MAX_RECEIVE_LOOPS queues a loop
   * cycles its queues without waiting. S3: ListObjectsV2 of the run's root over and over; the key
   * names the endpoint, the listed ETag the event; what was counted is deleted (a bucket that
   * only grew would cost moto more per listing than the puts being measured).
   */
  startReader(sink: LedgerSink, digests: BodyDigests): void {
    const reader = (this.reader = new Reader(sink));
    const signal = { abortSignal: reader.abort.signal };
    if (this.kind === 's3') {
      let last: number | undefined;
      const sweep = async () => {
        const started = now();
        if (last !== undefined) reader.delays.push(started - last);
        last = started;
        return this.sweep(reader, digests, signal);
      };
      reader.loop(sweep, 100);
      return;
    }
    const loops = Math.min(MAX_RECEIVE_LOOPS, this.queueUrls.length);
    for (let loop = 0; loop < loops; loop++) {
      const mine = this.queueUrls.flatMap((url, i) => (i % loops === loop ? [{ url, i }] : []));
      const wait = mine.length === 1 ? 1 : 0;
      const pass = async () => {
        let found = 0;
        for (const queue of mine) found += await this.receive(reader, queue, wait, signal);
        return found;
      };
      reader.loop(pass, wait === 0 ? 50 : 0);
    }
  }

  private async receive(
    reader: Reader,
    queue: { url: string; i: number },
    waitSeconds: number,
    signal: { abortSignal: AbortSignal },
  ): Promise<number> {
    const { Messages = [] } = await this.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queue.url,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: waitSeconds,
        VisibilityTimeout: 60,
        MessageSystemAttributeNames: ['SentTimestamp'],
      }),
      signal,
    );
    const at = now();
    reader.stats.calls++;
    if (Messages.length === 0) reader.stats.empty++;
    for (const m of Messages) {
      const id = m.MessageId ?? `${queue.i}/${m.ReceiptHandle}`;
      const sent = Number(m.Attributes?.SentTimestamp);
      if (reader.count(id, benchSequence(m.Body), queue.i, at) && Number.isFinite(sent))
        reader.delays.push(at - sent);
    }
    if (Messages.length === 0) return 0;
    const Entries = Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle }));
    await this.sqs.send(new DeleteMessageBatchCommand({ QueueUrl: queue.url, Entries }), signal);
    return Messages.length;
  }

  /** One pass over the root's listing, page by page; returns how many keys it listed. */
  private async sweep(
    reader: Reader,
    digests: BodyDigests,
    signal: { abortSignal: AbortSignal },
  ): Promise<number> {
    let token: string | undefined;
    let listed = 0;
    do {
      const page = await this.s3.send(
        new ListObjectsV2Command({
          Bucket: this.name,
          Prefix: this.root,
          ContinuationToken: token,
        }),
        signal,
      );
      const at = now();
      reader.stats.calls++;
      const done: { Key: string }[] = [];
      for (const { Key, ETag } of page.Contents ?? []) {
        const parsed = Key === undefined ? undefined : parseS3Key(this.root, Key);
        if (Key === undefined || !parsed) continue;
        reader.count(Key, digests.seqOf(ETag), parsed.endpoint, at);
        done.push({ Key });
      }
      if (done.length === 0) reader.stats.empty++;
      listed += done.length;
      if (done.length > 0)
        await this.s3.send(
          new DeleteObjectsCommand({ Bucket: this.name, Delete: { Objects: done, Quiet: true } }),
          signal,
        );
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return listed;
  }

  async stopReader(): Promise<void> {
    await this.reader?.stop();
  }

  /** The reader's line of the report: its calls, its own delay, what it saw twice. */
  describeReader(): [string, string] {
    const s = this.reader?.stats;
    const d = distribution(this.reader?.delays ?? []);
    const spread = `p50 ${fmtMs(d?.p50)} p99 ${fmtMs(d?.p99)} max ${fmtMs(d?.max)}`;
    const errors = `errors ${s?.errors ?? 0}${s?.error ? ` (${s.error})` : ''}`;
    return this.kind === 'sqs'
      ? [
          'reader (SQS consumers)',
          `${s?.calls} ReceiveMessage (${s?.empty} empty, long poll 1 s, 10 a batch) · delay first seen − SentTimestamp ${spread} · received again ${s?.repeats} · ${errors}`,
        ]
      : [
          'reader (S3 lister)',
          `${s?.calls} ListObjectsV2 (${s?.empty} empty), ${s?.counted} objects counted by ETag and deleted · sweep interval ${spread} · listed again ${s?.repeats} · ${errors}`,
        ];
  }

  readerProblems(): string[] {
    const unnamed = this.reader?.stats.unnamed ?? 0;
    return unnamed > 0
      ? [`the reader found ${unnamed} deliveries whose body it could not name (no bench sequence)`]
      : [];
  }

  readerExtra(): Record<string, unknown> {
    return { ...this.reader?.stats, delay: distribution(this.reader?.delays ?? []) };
  }

  private async emptyBucket(): Promise<void> {
    for (let pass = 0; pass < 1000; pass++) {
      const page = await this.s3.send(new ListObjectsV2Command({ Bucket: this.name }));
      const keys = (page.Contents ?? []).flatMap((o) => (o.Key ? [{ Key: o.Key }] : []));
      if (keys.length === 0) return;
      await this.s3.send(
        new DeleteObjectsCommand({ Bucket: this.name, Delete: { Objects: keys, Quiet: true } }),
      );
    }
  }

  /** Stops the reader, deletes the queues and the bucket (with what is left in it). */
  async tearDown(): Promise<void> {
    await this.stopReader().catch(() => undefined);
    await eachLimited(this.queueUrls, 8, async (QueueUrl) => {
      await this.sqs.send(new DeleteQueueCommand({ QueueUrl })).catch(() => undefined);
    });
    if (this.bucketMade) {
      await this.emptyBucket();
      await this.s3.send(new DeleteBucketCommand({ Bucket: this.name }));
    }
    this.sqs.destroy();
    this.s3.destroy();
  }
}
