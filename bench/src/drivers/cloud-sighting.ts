import { createHash } from 'node:crypto';
import { benchPayload } from './publisher';

/**
 * What the bench's cloud readers (SQS consumers, S3 listers) need to turn what they read from moto
 * into ledger entries: the bench sequence number in a delivered body, which endpoint an S3 key
 * belongs to, and a first-seen filter so one message read twice is counted once.
 */

/** The bench sequence number (`s`) of a delivered payload, or undefined when it has none. */
export function benchSequence(body: string | undefined): number | undefined {
  if (body === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(body);
    const seq = (parsed as { s?: unknown } | null)?.s;
    return typeof seq === 'number' && Number.isInteger(seq) && seq >= 0 ? seq : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The S3 prefix endpoint `index` is configured with: `<root>e<index>/`. Hookbase's S3 adapter
 * writes `<prefix><eventType>/<messageId>.json`, so a key names its endpoint by its prefix.
 */
export function s3EndpointPrefix(root: string, index: number): string {
  return `${root}e${index}/`;
}

/** The endpoint index and message id of a key the adapter wrote under `root`, or undefined. */
export function parseS3Key(
  root: string,
  key: string,
): { endpoint: number; eventType: string; messageId: string } | undefined {
  if (!key.startsWith(root)) return undefined;
  const match = /^e(\d{1,7})\/([^/]+)\/([^/]+)\.json$/.exec(key.slice(root.length));
  if (!match) return undefined;
  return { endpoint: Number(match[1]), eventType: match[2], messageId: match[3] };
}

/**
 * Remembers what a reader has already counted (SQS message ids, S3 keys). `first(id)` is true
 * only the first time: an SQS message received again after its visibility timeout, or an S3 key
 * listed again before its delete went through, is the same delivery and is not counted twice.
 */
export class FirstSeen {
  private readonly seen = new Set<string>();
  repeats = 0;

  first(id: string): boolean {
    if (this.seen.has(id)) {
      this.repeats++;
      return false;
    }
    this.seen.add(id);
    return true;
  }

  /** Forgets `id`, so it counts again (its read failed and will be retried). */
  forget(id: string): void {
    this.seen.delete(id);
  }

  get size(): number {
    return this.seen.size;
  }
}

/**
 * The S3 ETag of each planned event's body, so a listing alone names the event: the adapter writes
 * `JSON.stringify(payload)`, and the ETag of a single PutObject is the MD5 of the body, quoted.
 * An ETag not found here (a body serialized differently) sends the reader to GET the object.
 */
export class BodyDigests {
  private readonly bySum = new Map<string, number>();

  constructor(events: number, payloadBytes: number) {
    for (let seq = 0; seq < events; seq++) {
      const body = JSON.stringify(benchPayload(seq, payloadBytes));
      this.bySum.set(createHash('md5').update(body).digest('hex'), seq);
    }
  }

  /** The sequence number whose body has this ETag (quoted or not), or undefined. */
  seqOf(etag: string | undefined): number | undefined {
    if (!etag) return undefined;
    return this.bySum.get(etag.replace(/^"|"$/g, '').toLowerCase());
  }
}
