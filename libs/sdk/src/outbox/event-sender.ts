import { classifyResponse, SendOutcome } from './relay-policy';

/** One outbox row, as the relay hands it to Hookbase. */
export interface OutboxEvent {
  id: string;
  eventType: string;
  payload: Record<string, unknown>;
  endpointIds: string[] | null;
  idempotencyKey: string;
}

/**
 * How the relay hands an event to Hookbase. The relay only needs an outcome per event; any client
 * of `POST /v1/events` can stand behind this (FetchEventSender below, or the SDK's client).
 * It must not throw for Hookbase's answers or network failures: those are outcomes.
 */
export interface EventSender {
  send(event: OutboxEvent): Promise<SendOutcome>;
}

export interface FetchEventSenderOptions {
  /** Hookbase's base URL, e.g. https://hookbase.example.com */
  baseUrl: string;
  /** An API key of the organization the events belong to (`hb_…`). */
  apiKey: string;
  /** Give up on one request after this long and try again later. Default 10 s. */
  timeoutMs?: number;
}

/** `POST /v1/events` with plain fetch, the outbox row's idempotency key in the body. */
export class FetchEventSender implements EventSender {
  private readonly url: string;

  constructor(private readonly options: FetchEventSenderOptions) {
    this.url = new URL('/v1/events', options.baseUrl).toString();
  }

  async send(event: OutboxEvent): Promise<SendOutcome> {
    const body = JSON.stringify({
      eventType: event.eventType,
      payload: event.payload,
      idempotencyKey: event.idempotencyKey,
      ...(event.endpointIds ? { endpointIds: event.endpointIds } : {}),
    });
    let response: Response;
    let parsed: unknown = null;
    try {
      response = await fetch(this.url, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${this.options.apiKey}`,
          'content-type': 'application/json',
        },
        body,
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 10_000),
      });
      const text = await response.text();
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        parsed = null;
      }
    } catch (error) {
      return { kind: 'retry', reason: `network: ${networkReason(error)}` };
    }
    return classifyResponse(response.status, parsed, response.headers.get('retry-after'));
  }
}

/** The most telling part of a fetch failure: the socket's code (ECONNREFUSED…) when there is one. */
function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown; errors?: unknown } })
    .cause;
  const inner = Array.isArray(cause?.errors) ? (cause.errors[0] as { code?: unknown }) : undefined;
  const code = cause?.code ?? inner?.code;
  if (typeof code === 'string') return code;
  if (typeof cause?.message === 'string' && cause.message) return cause.message;
  return error instanceof Error ? error.message : String(error);
}
