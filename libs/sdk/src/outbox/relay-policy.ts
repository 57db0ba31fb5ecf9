import { Backoff, backoffDelay } from '@hookbase/domain';

/** What Hookbase made of one event the relay sent. */
export type SendOutcome =
  /** Stored at Hookbase (now, or earlier under the same idempotency key). */
  | { kind: 'accepted'; eventId: string | null; duplicate: boolean }
  /** Not stored, try again later: Hookbase unreachable or busy, or the relay misconfigured. */
  | { kind: 'retry'; reason: string; retryAfterMs?: number }
  /** Refused for good: sending it again can never succeed. */
  | { kind: 'rejected'; status: number; code: string; message: string };

/**
 * Statuses that refuse the event itself (its content or its key), for good. Anything else that is
 * not a 2xx is worth trying again: 5xx, 408, 425 and 429 are passing; 401, 403 and 404 mean the
 * relay's key or URL is wrong, which the operator fixes without losing the waiting events.
 */
const REFUSES_THE_EVENT = new Set([400, 409, 413, 415, 422]);

/** Seconds or an HTTP date, as `Retry-After` carries it; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now: number = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  if (!/[a-z]/i.test(header)) return undefined;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

export function classifyResponse(
  status: number,
  body: unknown,
  retryAfterHeader: string | null,
): SendOutcome {
  const data = (body as { data?: { id?: unknown; duplicate?: unknown } } | null)?.data;
  if (status >= 200 && status < 300) {
    return {
      kind: 'accepted',
      eventId: typeof data?.id === 'string' ? data.id : null,
      duplicate: data?.duplicate === true,
    };
  }
  const error = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  const code = typeof error?.code === 'string' ? error.code : `HTTP_${status}`;
  const message = typeof error?.message === 'string' ? error.message : `HTTP ${status}`;
  if (REFUSES_THE_EVENT.has(status)) return { kind: 'rejected', status, code, message };
  const after = retryAfterMs(retryAfterHeader);
  return {
    kind: 'retry',
    reason: `${status} ${code}: ${message}`,
    ...(after !== undefined ? { retryAfterMs: after } : {}),
  };
}

export const DEFAULT_RELAY_BACKOFF: Backoff = { baseMs: 250, maxMs: 30_000, growth: 'doubling' };

/**
 * How long the relay waits after its `failures`-th retryable failure in a row: the backoff, or
 * what Hookbase asked for in Retry-After when that is longer (never beyond the backoff's cap).
 */
export function relayRetryDelay(
  backoff: Backoff,
  failures: number,
  retryAfter: number | undefined,
): number {
  const own = backoffDelay(backoff, Math.max(0, failures - 1));
  return Math.min(Math.max(own, retryAfter ?? 0), backoff.maxMs);
}
