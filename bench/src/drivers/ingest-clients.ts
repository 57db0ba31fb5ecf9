import { Pool } from 'undici';
import { Ledger } from '../core/ledger';
import { now } from '../core/util';
import { BenchEvent, benchPayload, EVENT_TYPE } from './publisher';

export type PublishOutcome =
  { kind: 'accepted'; eventId: string } | { kind: 'refused' | 'failed'; detail: string };

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

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
};

/** A 202 (single) or a batch result's `{ status: 202, data: { id } }`, or a refusal. */
function outcomeOf(status: number, body: unknown): PublishOutcome {
  if (status !== 202) return { kind: 'refused', detail: refusalDetail(status, body) };
  const id = (body as { data?: { id?: unknown } } | null)?.data?.id;
  return typeof id === 'string'
    ? { kind: 'accepted', eventId: id }
    : { kind: 'failed', detail: 'HTTP 202 without an event id' };
}

/**
 * The outcomes of a `POST /v1/events/batch` answer: 207 with one result per event, in order; any
 * other status refuses the whole request, and a 207 that does not answer every event fails them.
 */
export function batchOutcomes(statusCode: number, text: string, count: number): PublishOutcome[] {
  const body = parseJson(text);
  const all = (outcome: PublishOutcome) => Array.from({ length: count }, () => outcome);
  if (statusCode !== 207) return all({ kind: 'refused', detail: refusalDetail(statusCode, body) });
  const results = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(results) || results.length !== count) {
    const got = Array.isArray(results) ? results.length : 'no';
    return all({ kind: 'failed', detail: `HTTP 207 with ${got} results for ${count} events` });
  }
  return results.map((result: { status?: unknown }) =>
    outcomeOf(typeof result?.status === 'number' ? result.status : 0, result),
  );
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
      this.post('/v1/events', event, 1, (status, text) => [outcomeOf(status, parseJson(text))]);
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
      const detail = (error as { code?: string }).code ?? (error as Error).message;
      return Array.from({ length: count }, () => ({ kind: 'failed', detail }));
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
    else ledger[outcome.kind](seq, at, outcome.detail);
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
    applicationId?: string;
  },
): Promise<void> {
  ledger.schedule(seq, scheduledAt, load.targets);
  const payload = benchPayload(seq, load.payloadBytes);
  const event = {
    eventType: EVENT_TYPE,
    payload,
    endpointIds: load.endpointIds,
    ...(load.channels ? { channels: load.channels } : {}),
    ...(load.applicationId ? { applicationId: load.applicationId } : {}),
  };
  await publishGroupInto(ledger, publisher, [seq], [event]);
}
