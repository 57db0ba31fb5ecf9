import { HookbaseApiError, HookbaseConnectionError } from '../client/errors';
import type { Hookbase, PublishInput } from '../client/hookbase';
import type { RetryPolicy } from '../client/retry';
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
 * How the relay hands an event to Hookbase. The relay only needs an outcome per event
 * (HookbaseEventSender below, on the SDK's client, or a stand-in in tests).
 * It must not throw for Hookbase's answers or network failures: those are outcomes.
 */
export interface EventSender {
  send(event: OutboxEvent): Promise<SendOutcome>;
}

export interface HookbaseEventSenderOptions {
  /** The client's retry policy for each event, overridden (e.g. shorter, for a quick stop). */
  retry?: Partial<RetryPolicy>;
}

/**
 * `Hookbase.publish` with the outbox row's idempotency key (the row's id unless the producer gave
 * its own): the client retries 503, 429 and network failures with that key, honouring
 * Retry-After; what is still not accepted after its retries becomes a `retry` outcome, and the
 * relay tries the same row again after its own backoff.
 */
export class HookbaseEventSender implements EventSender {
  constructor(
    private readonly hookbase: Hookbase,
    private readonly options: HookbaseEventSenderOptions = {},
  ) {}

  async send(event: OutboxEvent): Promise<SendOutcome> {
    const input: PublishInput = {
      eventType: event.eventType,
      payload: event.payload,
      idempotencyKey: event.idempotencyKey,
      ...(event.endpointIds ? { endpointIds: event.endpointIds } : {}),
    };
    try {
      const result = await this.hookbase.publish(
        input,
        this.options.retry ? { retry: this.options.retry } : {},
      );
      return { kind: 'accepted', eventId: result.id ?? null, duplicate: result.duplicate === true };
    } catch (error) {
      return outcomeOf(error);
    }
  }
}

/** What a failed `Hookbase.publish` means for the row: the relay's rules on the API's answer. */
export function outcomeOf(error: unknown): SendOutcome {
  if (error instanceof HookbaseApiError) {
    const retryAfter =
      error.retryAfterSeconds === undefined ? null : String(error.retryAfterSeconds);
    return classifyResponse(
      error.status,
      { error: { code: error.code, message: error.message } },
      retryAfter,
    );
  }
  if (error instanceof HookbaseConnectionError) {
    return { kind: 'retry', reason: `network: ${networkReason(error)}` };
  }
  return { kind: 'retry', reason: error instanceof Error ? error.message : String(error) };
}

/** The most telling part of a fetch failure: the socket's code (ECONNREFUSED…) when there is one. */
function networkReason(error: HookbaseConnectionError): string {
  const fetchError = error.cause as { cause?: { code?: unknown; errors?: unknown } } | undefined;
  const cause = fetchError?.cause;
  const inner = Array.isArray(cause?.errors) ? (cause.errors[0] as { code?: unknown }) : undefined;
  const code = cause?.code ?? inner?.code;
  if (typeof code === 'string') return code;
  return error.code === 'NETWORK_ERROR' ? error.message : `${error.code}: ${error.message}`;
}
