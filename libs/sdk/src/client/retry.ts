import { HookbaseApiError, HookbaseConnectionError } from './errors';

/** How publishing retries what may not have been accepted: bounded in attempts and in total time. */
export interface RetryPolicy {
  /** Attempts in all, the first included (default 5; 1 = no retry). */
  maxAttempts: number;
  /** No attempt starts after this long since the first (default 30 s). */
  maxElapsedMs: number;
  /** First backoff when the server gives no Retry-After (default 200 ms), doubled each time. */
  initialDelayMs: number;
  /** Longest backoff without Retry-After (default 10 s); a Retry-After is waited in full. */
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 5,
  maxElapsedMs: 30_000,
  initialDelayMs: 200,
  maxDelayMs: 10_000,
};

/** 503 (not accepted: retry), 429 (slow down) and any failure to reach the API are worth retrying. */
export function isRetryable(error: unknown): boolean {
  if (error instanceof HookbaseApiError) return error.status === 503 || error.status === 429;
  return error instanceof HookbaseConnectionError && error.code !== 'INVALID_RESPONSE';
}

/**
 * The wait before attempt `attempt + 1` after `error`, or undefined to give up: Retry-After when the
 * server sent one (in full: a wait that would end past the total time gives up instead), else
 * exponential backoff with jitter; never past the policy's total time.
 */
export function retryDelay(
  policy: RetryPolicy,
  attempt: number,
  elapsedMs: number,
  error: unknown,
  random: () => number = Math.random,
): number | undefined {
  if (attempt >= policy.maxAttempts || !isRetryable(error)) return undefined;
  const retryAfter = error instanceof HookbaseApiError ? error.retryAfterSeconds : undefined;
  const backoff = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** (attempt - 1));
  const delay =
    retryAfter !== undefined ? retryAfter * 1000 : backoff / 2 + (random() * backoff) / 2;
  if (elapsedMs + delay > policy.maxElapsedMs) return undefined;
  return Math.round(delay);
}
