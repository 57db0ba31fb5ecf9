import { classifyAttempt, MAX_RETRY_AFTER_MS, parseRetryAfter } from './attempt-outcome';

const now = new Date('2026-06-01T12:00:00Z');
const status = (code: number, retryAfter?: string) =>
  classifyAttempt({ type: 'response', status: code, retryAfter }, now);

describe('classifyAttempt', () => {
  it.each([
    [199, 'failed'],
    [200, 'succeeded'],
    [204, 'succeeded'],
    [299, 'succeeded'],
    [300, 'failed'],
    [301, 'failed'],
    [399, 'failed'],
    [400, 'failed'],
    [401, 'failed'],
    [407, 'failed'],
    [408, 'retry'],
    [409, 'failed'],
    [410, 'failed'],
    [424, 'failed'],
    [425, 'retry'],
    [426, 'failed'],
    [428, 'failed'],
    [429, 'retry'],
    [430, 'failed'],
    [499, 'failed'],
    [500, 'retry'],
    [503, 'retry'],
    [599, 'retry'],
    [600, 'failed'],
  ])('HTTP %i is %s', (code, kind) => {
    const outcome = status(code);
    expect(outcome.kind).toBe(kind);
    expect(outcome.status).toBe(code);
  });

  it('says why a redirect failed', () => {
    expect(status(302)).toEqual({
      kind: 'failed',
      status: 302,
      error: 'HTTP 302 (redirects are not followed)',
    });
  });

  it('retries timeouts and network errors', () => {
    expect(classifyAttempt({ type: 'timeout' }, now)).toEqual({ kind: 'retry', error: 'timeout' });
    expect(classifyAttempt({ type: 'network', message: 'ECONNREFUSED' }, now)).toEqual({
      kind: 'retry',
      error: 'network: ECONNREFUSED',
    });
  });

  it('carries Retry-After on retryable statuses only', () => {
    expect(status(429, '7')).toEqual({
      kind: 'retry',
      status: 429,
      error: 'HTTP 429',
      retryAfterMs: 7000,
    });
    expect(status(503, '7')).toMatchObject({ retryAfterMs: 7000 });
    expect(status(503)).not.toHaveProperty('retryAfterMs');
    expect(status(400, '7')).not.toHaveProperty('retryAfterMs');
  });
});

describe('parseRetryAfter', () => {
  it('reads delta-seconds', () => {
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 5 ', now)).toBe(5000);
  });

  it('reads an HTTP date relative to now, past dates as zero', () => {
    expect(parseRetryAfter('Mon, 01 Jun 2026 12:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Mon, 01 Jun 2026 11:00:00 GMT', now)).toBe(0);
  });

  it('clamps huge values to the maximum', () => {
    expect(parseRetryAfter('999999999', now)).toBe(MAX_RETRY_AFTER_MS);
    expect(parseRetryAfter('Fri, 01 Jan 2100 00:00:00 GMT', now)).toBe(MAX_RETRY_AFTER_MS);
    expect(parseRetryAfter('100', now, 50_000)).toBe(50_000);
  });

  it.each([undefined, null, '', 'soon', '-5', '1.5', '12abc'])('ignores %p', (value) => {
    expect(parseRetryAfter(value, now)).toBeUndefined();
  });
});
