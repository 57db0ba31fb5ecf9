import { Pool } from 'undici';
import { now } from '../core/clock';
import { Ledger } from '../core/ledger';
import { BenchEvent, IngestClient, PublishOutcome } from './publisher';

/**
 * One call of an ingest surface, as the step runner drives it: the events of one request in,
 * one outcome per event out, in the order sent. Never throws: a transport failure is a `failed`
 * outcome for every event of the call (the client cannot know whether they were stored).
 */
export interface EventPublisher {
  publish(events: readonly BenchEvent[]): Promise<PublishOutcome[]>;
  close(): Promise<void>;
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

/** `POST /v1/events`, one request per event (the existing ingest-rest client). */
export function singleEventRest(client: IngestClient): EventPublisher {
  return {
    publish: (events) => Promise.all(events.map((event) => client.publish(event))),
    close: () => client.close(),
  };
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
 * `POST /v1/events/batch` over a keep-alive connection pool (undici), as a producer batching on
 * its side would send them. Every request has a timeout, so nothing waits forever.
 */
export class BatchRestPublisher implements EventPublisher {
  private readonly pool: Pool;

  constructor(
    baseUrl: string,
    private readonly apiKey: string,
    connections: number,
  ) {
    this.pool = new Pool(baseUrl, { connections, pipelining: 1, keepAliveTimeout: 30_000 });
  }

  async publish(events: readonly BenchEvent[]): Promise<PublishOutcome[]> {
    try {
      const response = await this.pool.request({
        path: '/v1/events/batch',
        method: 'POST',
        headers: {
          authorization: `Bearer ${this.apiKey}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ events }),
        headersTimeout: 30_000,
        bodyTimeout: 30_000,
      });
      return batchOutcomes(response.statusCode, await response.body.text(), events.length);
    } catch (error) {
      const e = error as { code?: string; message: string };
      return events.map(() => ({ kind: 'failed', detail: e.code ?? e.message }));
    }
  }

  async close(): Promise<void> {
    await this.pool.close().catch(() => undefined);
  }
}
