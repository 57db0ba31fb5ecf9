import { Pool } from 'undici';
import { now } from '../core/clock';
import { Ledger } from '../core/ledger';
import { BenchEvent, benchPayload, EVENT_TYPE } from './publisher';

export type PublishOutcome =
  | { kind: 'accepted'; eventId: string }
  | { kind: 'refused'; detail: string }
  | { kind: 'failed'; detail: string };

/**
 * One call of an ingest surface: the events of one request in, one outcome per event out, in the
 * order sent. Never throws: a transport failure is a `failed` outcome for every event of the call
 * (the client cannot know whether they were stored).
 */
export interface EventPublisher {
  publish(events: readonly BenchEvent[]): Promise<PublishOutcome[]>;
  close(): Promise<void>;
}

/** "HTTP 400 VALIDATION_FAILED" from a refusal's status and body (the code when it has one). */
export function refusalDetail(statusCode: number, body: unknown): string {
  const code = (body as { error?: { code?: unknown } } | null)?.error?.code;
  return `HTTP ${statusCode}${typeof code === 'string' && code ? ` ${code}` : ''}`;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** The outcome of a `POST /v1/events` answer: 202 with the event's id, or a refusal. */
function singleOutcome(statusCode: number, text: string): PublishOutcome {
  const body = parseJson(text);
  if (statusCode !== 202) return { kind: 'refused', detail: refusalDetail(statusCode, body) };
  const id = (body as { data?: { id?: unknown } } | null)?.data?.id;
  return typeof id === 'string'
    ? { kind: 'accepted', eventId: id }
    : { kind: 'failed', detail: 'HTTP 202 without an event id' };
}

/**
 * The outcomes of a `POST /v1/events/batch` answer: 207 with one result per event, in order
 * (`{ status: 202, data: { id } }` or `{ status, error: { code } }`); any other status refuses
 * the whole request, and a 207 that does not answer every event fails them all.
 */
export function batchOutcomes(statusCode: number, text: string, count: number): PublishOutcome[] {
  const body = parseJson(text);
  if (statusCode !== 207) {
    return Array.from({ length: count }, () => ({
      kind: 'refused' as const,
      detail: refusalDetail(statusCode, body),
    }));
  }
  const results = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(results) || results.length !== count) {
    const got = Array.isArray(results) ? results.length : 'no';
    return Array.from({ length: count }, () => ({
      kind: 'failed' as const,
      detail: `HTTP 207 with ${got} results for ${count} events`,
    }));
  }
  return results.map((result: { status?: unknown; data?: { id?: unknown } }): PublishOutcome => {
    const status = typeof result?.status === 'number' ? result.status : 0;
    if (status === 202) {
      const id = result.data?.id;
      return typeof id === 'string'
        ? { kind: 'accepted', eventId: id }
        : { kind: 'failed', detail: 'result 202 without an event id' };
    }
    return { kind: 'refused', detail: refusalDetail(status, result) };
  });
}

/**
 * REST ingest over a keep-alive connection pool (undici), as a producer would send: one
 * `POST /v1/events` per event, or (`batch`) one `POST /v1/events/batch` per call. Every request
 * has a timeout, so nothing waits forever.
 */
export class IngestClient implements EventPublisher {
  private readonly pool: Pool;

  constructor(
    baseUrl: string,
    private readonly apiKey: string,
    connections: number,
    private readonly batch = false,
  ) {
    this.pool = new Pool(baseUrl, { connections, pipelining: 1, keepAliveTimeout: 30_000 });
  }

  async publish(events: readonly BenchEvent[]): Promise<PublishOutcome[]> {
    if (this.batch)
      return this.post('/v1/events/batch', { events }, events.length, (status, text) =>
        batchOutcomes(status, text, events.length),
      );
    const one = (event: BenchEvent) =>
      this.post('/v1/events', event, 1, (status, text) => [singleOutcome(status, text)]);
    return (await Promise.all(events.map(one))).flat();
  }

  private async post(
    path: string,
    body: unknown,
    count: number,
    read: (statusCode: number, text: string) => PublishOutcome[],
  ): Promise<PublishOutcome[]> {
    try {
      const response = await this.pool.request({
        path,
        method: 'POST',
        headers: { authorization: `Bearer ${this.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        headersTimeout: 30_000,
        bodyTimeout: 30_000,
      });
      return read(response.statusCode, await response.body.text());
    } catch (error) {
      const e = error as { code?: string; message: string };
      return Array.from({ length: count }, () => ({ kind: 'failed', detail: e.code ?? e.message }));
    }
  }

  async close(): Promise<void> {
    await this.pool.close().catch(() => undefined);
  }
}

/**
 * Publishes one call's events and writes each to the ledger: sent together, then accepted,
 * refused or failed together when the answer arrives. Returns the call's latency (answered −
 * sent, ms): for a batch, every event of it waited that long.
 */
export async function publishGroupInto(
  ledger: Ledger,
  publisher: EventPublisher,
  seqs: readonly number[],
  events: readonly BenchEvent[],
): Promise<number> {
  const sentAt = now();
  for (const seq of seqs) ledger.sent(seq, sentAt);
  const outcomes = await publisher.publish(events);
  const at = now();
  seqs.forEach((seq, i) => {
    const outcome = outcomes[i] ?? { kind: 'failed', detail: 'no outcome for this event' };
    if (outcome.kind === 'accepted') ledger.accepted(seq, at, outcome.eventId);
    else if (outcome.kind === 'refused') ledger.refused(seq, at, outcome.detail);
    else ledger.failed(seq, at, outcome.detail);
  });
  return at - sentAt;
}

/** Schedules event `seq` for `targets` in the ledger, then publishes it with a bench payload. */
export async function publishSeq(
  ledger: Ledger,
  publisher: EventPublisher,
  seq: number,
  scheduledAt: number,
  load: {
    targets: ReadonlySet<number>;
    payloadBytes: number;
    endpointIds?: string[];
    channels?: string[];
  },
): Promise<void> {
  ledger.schedule(seq, scheduledAt, load.targets);
  const payload = benchPayload(seq, load.payloadBytes);
  const event = {
    eventType: EVENT_TYPE,
    payload,
    endpointIds: load.endpointIds,
    ...(load.channels ? { channels: load.channels } : {}),
  };
  await publishGroupInto(ledger, publisher, [seq], [event]);
}
