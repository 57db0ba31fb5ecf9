import { HookbaseApiError, HookbaseConnectionError, parseRetryAfter } from './errors';
import { DEFAULT_RETRY_POLICY, isRetryable, retryDelay } from './retry';

const unavailable = (retryAfter?: number) =>
  new HookbaseApiError(503, 'UNAVAILABLE', 'not accepted', undefined, retryAfter);

describe('publish retries', () => {
  it('retries 503, 429 and network errors, nothing else', () => {
    expect(isRetryable(unavailable())).toBe(true);
    expect(isRetryable(new HookbaseApiError(429, 'RATE_LIMITED', 'slow down'))).toBe(true);
    expect(isRetryable(new HookbaseConnectionError('NETWORK_ERROR', 'refused'))).toBe(true);
    expect(isRetryable(new HookbaseConnectionError('TIMEOUT', 'slow'))).toBe(true);
    expect(isRetryable(new HookbaseConnectionError('INVALID_RESPONSE', 'html'))).toBe(false);
    expect(isRetryable(new HookbaseApiError(400, 'VALIDATION_FAILED', 'bad'))).toBe(false);
    expect(isRetryable(new HookbaseApiError(409, 'IDEMPOTENCY_CONFLICT', 'other'))).toBe(false);
    expect(isRetryable(new Error('bug'))).toBe(false);
  });

  it('waits exactly what Retry-After says', () => {
    expect(retryDelay(DEFAULT_RETRY_POLICY, 1, 0, unavailable(2))).toBe(2000);
    expect(retryDelay(DEFAULT_RETRY_POLICY, 1, 0, unavailable(0))).toBe(0);
  });

  it('backs off exponentially with jitter without Retry-After, capped', () => {
    const policy = { ...DEFAULT_RETRY_POLICY, maxAttempts: 20, maxElapsedMs: 1e9 };
    expect(retryDelay(policy, 1, 0, unavailable(), () => 0)).toBe(100);
    expect(retryDelay(policy, 1, 0, unavailable(), () => 1)).toBe(200);
    expect(retryDelay(policy, 3, 0, unavailable(), () => 1)).toBe(800);
    expect(retryDelay(policy, 15, 0, unavailable(), () => 1)).toBe(policy.maxDelayMs);
  });

  it('is bounded by attempts and by total time', () => {
    const policy = { ...DEFAULT_RETRY_POLICY, maxAttempts: 3, maxElapsedMs: 5000 };
    expect(retryDelay(policy, 3, 0, unavailable(1))).toBeUndefined();
    expect(retryDelay(policy, 2, 0, unavailable(1))).toBe(1000);
    // A Retry-After that would end past the total time gives up rather than waiting less.
    expect(retryDelay(policy, 1, 4500, unavailable(1))).toBeUndefined();
    expect(retryDelay(policy, 1, 0, unavailable(60))).toBeUndefined();
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('3', now)).toBe(3);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:05 GMT', now)).toBe(5);
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });
});
