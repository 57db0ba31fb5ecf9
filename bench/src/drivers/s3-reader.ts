import { setMaxListeners } from 'node:events';
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import { BodyDigests, benchSequence, FirstSeen, parseS3Key } from './cloud-sighting';
import { now } from '../core/clock';
import { eachLimited } from '../core/concurrency';
import { LedgerSink } from '../core/ledger';
import { pauseUnlessAborted } from './sqs-reader';

const EMPTY_PAUSE_MS = 100;
const ERROR_PAUSE_MS = 200;
const GET_CONCURRENCY = 16;

/**
 * The bench's S3 reader: lists everything under the run's root (every endpoint's prefix) with
 * ListObjectsV2, over and over. A key is seen when the listing that first shows it arrives: that
 * is its first-seen time in the ledger. The key's prefix names the endpoint; the listed ETag (the
 * MD5 of the body) names the event among the planned bodies, so a page of 1,000 objects costs moto
 * one list and one delete, not 1,000 GETs competing with Hookbase's puts. An object whose ETag is
 * unknown is read (GET, 16 at a time) for the sequence number in its body. What was counted is then
 * deleted (DeleteObjects), as a consumer that moves objects along would: the bucket holds only
 * what has not been read yet, so each listing stays short. (moto filters and sorts every key of
 * a bucket on each ListObjectsV2, so listing a bucket that only grows, or each prefix apart,
 * would cost it more per sweep than the puts being measured. And a StartAfter cursor per prefix
 * could miss objects: keys are not written in their sort order, since a dispatcher runs several
 * attempts at once and retries come later.)
 *
 * After a sweep that found nothing the reader pauses 100 ms. The interval between sweeps is
 * recorded: a message waits up to one interval before it is seen.
 */
export class S3Reader {
  readonly stats = {
    lists: 0,
    emptyLists: 0,
    objects: 0,
    /** Objects named by their ETag in the listing (no GET needed). */
    byEtag: 0,
    /** Objects whose ETag was not a planned body's, read with GET. */
    read: 0,
    /** A key listed again after it was counted: its delete had not gone through, or it was written again. */
    relisted: 0,
    foreign: 0,
    malformed: 0,
    errors: 0,
    lastError: '',
  };
  /** ms between the starts of consecutive sweeps. */
  readonly sweepIntervals: number[] = [];
  private readonly seen = new FirstSeen();
  private readonly abort = new AbortController();
  private loop: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    private readonly root: string,
    private readonly sink: LedgerSink,
    private readonly digests: BodyDigests,
  ) {}

  start(): void {
    setMaxListeners(0, this.abort.signal);
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    await this.loop;
  }

  private async run(): Promise<void> {
    let lastSweep: number | undefined;
    while (!this.stopped) {
      const started = now();
      if (lastSweep !== undefined) this.sweepIntervals.push(started - lastSweep);
      lastSweep = started;
      try {
        const found = await this.sweep();
        if (found === 0) await pauseUnlessAborted(EMPTY_PAUSE_MS, this.abort.signal);
      } catch (error) {
        if (this.stopped) return;
        this.stats.errors++;
        this.stats.lastError = (error as Error).name || (error as Error).message;
        await pauseUnlessAborted(ERROR_PAUSE_MS, this.abort.signal);
      }
    }
  }

  /** One pass over the listing, page by page; returns how many keys it listed. */
  private async sweep(): Promise<number> {
    let token: string | undefined;
    let listed = 0;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: this.root,
          MaxKeys: 1000,
          ContinuationToken: token,
        }),
        { abortSignal: this.abort.signal },
      );
      const at = now();
      this.stats.lists++;
      const objects = (page.Contents ?? []).flatMap((object) =>
        object.Key ? [{ key: object.Key, etag: object.ETag }] : [],
      );
      if (objects.length === 0) this.stats.emptyLists++;
      listed += objects.length;
      const done = await this.readNew(objects, at);
      if (done.length > 0) {
        await this.client.send(
          new DeleteObjectsCommand({
            Bucket: this.bucket,
            Delete: { Objects: done.map((Key) => ({ Key })), Quiet: true },
          }),
          { abortSignal: this.abort.signal },
        );
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token && !this.stopped);
    return listed;
  }

  /**
   * Counts the keys not counted yet: by ETag when it is a planned body's, else by reading the
   * object. Returns the keys that may be deleted now.
   */
  private async readNew(
    objects: readonly { key: string; etag: string | undefined }[],
    seenAt: number,
  ): Promise<string[]> {
    const done: string[] = [];
    const fresh: { key: string; endpoint: number }[] = [];
    for (const { key, etag } of objects) {
      const parsed = parseS3Key(this.root, key);
      if (!parsed) {
        this.stats.foreign++;
        continue;
      }
      if (!this.seen.first(key)) {
        this.stats.relisted++;
        done.push(key);
        continue;
      }
      const seq = this.digests.seqOf(etag);
      if (seq === undefined) {
        fresh.push({ key, endpoint: parsed.endpoint });
        continue;
      }
      this.stats.objects++;
      this.stats.byEtag++;
      this.sink.attempt(seq, parsed.endpoint, seenAt, true);
      done.push(key);
    }
    await eachLimited(fresh, GET_CONCURRENCY, async ({ key, endpoint }) => {
      if (this.stopped) return;
      try {
        const object = await this.client.send(
          new GetObjectCommand({ Bucket: this.bucket, Key: key }),
          { abortSignal: this.abort.signal },
        );
        const seq = benchSequence(await object.Body?.transformToString('utf8'));
        done.push(key);
        if (seq === undefined) {
          this.stats.malformed++;
          return;
        }
        this.stats.objects++;
        this.stats.read++;
        this.sink.attempt(seq, endpoint, seenAt, true);
      } catch (error) {
        // Not counted: the next sweep lists it again and reads it then.
        this.seen.forget(key);
        if (!this.stopped) {
          this.stats.errors++;
          this.stats.lastError = (error as Error).name || (error as Error).message;
        }
      }
    });
    return done;
  }
}
