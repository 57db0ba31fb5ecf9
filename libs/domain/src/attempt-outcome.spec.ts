import {
  AttemptOutcome,
  classifyAttempt,
  MAX_RETRY_AFTER_MS,
  parseRetryAfter,
} from './attempt-outcome';

const now = new Date('2026-06-01T12:00:00Z'); // a Monday
const response = (status: number, retryAfter?: string | null): AttemptOutcome =>
  classifyAttempt({ type: 'response', status, retryAfter }, now);

describe('classifyAttempt', () => {
  it.each([
    [100, 'failed', 'HTTP 100 (not a final response)'],
    [101, 'failed', 'HTTP 101 (not a final response)'],
    [199, 'failed', 'HTTP 199 (not a final response)'],
    [300, 'failed', 'HTTP 300 (redirects are not followed)'],
    [301, 'failed', 'HTTP 301 (redirects are not followed)'],
    [302, 'failed', 'HTTP 302 (redirects are not followed)'],
    [304, 'failed', 'HTTP 304 (redirects are not followed)'],
    [307, 'failed', 'HTTP 307 (redirects are not followed)'],
    [308, 'failed', 'HTTP 308 (redirects are not followed)'],
    [399, 'failed', 'HTTP 399 (redirects are not followed)'],
    [400, 'failed', 'HTTP 400'],
    [401, 'failed', 'HTTP 401'],
    [403, 'failed', 'HTTP 403'],
    [404, 'failed', 'HTTP 404'],
    [407, 'failed', 'HTTP 407'],
    [408, 'retry', 'HTTP 408'],
    [409, 'failed', 'HTTP 409'],
    [410, 'failed', 'HTTP 410'],
    [413, 'failed', 'HTTP 413'],
    [422, 'failed', 'HTTP 422'],
    [424, 'failed', 'HTTP 424'],
    [425, 'retry', 'HTTP 425'],
    [426, 'failed', 'HTTP 426'],
    [428, 'failed', 'HTTP 428'],
    [429, 'retry', 'HTTP 429'],
    [430, 'failed', 'HTTP 430'],
    [499, 'failed', 'HTTP 499'],
    [500, 'retry', 'HTTP 500'],
    [501, 'retry', 'HTTP 501'],
    [502, 'retry', 'HTTP 502'],
    [503, 'retry', 'HTTP 503'],
    [504, 'retry', 'HTTP 504'],
    [599, 'retry', 'HTTP 599'],
  ])('HTTP %i: %s (%s)', (status, kind, error) => {
    expect(response(status)).toEqual({ kind, status, error });
  });

  it.each([200, 201, 202, 204, 226, 299])('HTTP %i succeeds', (status) => {
    expect(response(status)).toEqual({ kind: 'succeeded', status });
  });

  it.each([0, 99, 600, 999, 200.5, Number.NaN])(
    'fails for good on %p, which is no HTTP status',
    (status) => {
      expect(response(status)).toEqual({
        kind: 'failed',
        status,
        error: `HTTP ${status} (not a valid status code)`,
      });
    },
  );

  it('retries a timeout and a network error, without a status', () => {
    expect(classifyAttempt({ type: 'timeout' }, now)).toEqual({ kind: 'retry', error: 'timeout' });
    expect(classifyAttempt({ type: 'network', message: 'ECONNREFUSED 10.0.0.1:443' }, now)).toEqual(
      { kind: 'retry', error: 'network: ECONNREFUSED 10.0.0.1:443' },
    );
  });

  it.each([408, 425, 429, 500, 503, 599])('honours Retry-After on HTTP %i', (status) => {
    expect(response(status, '7')).toEqual({
      kind: 'retry',
      status,
      error: `HTTP ${status}`,
      retryAfterMs: 7000,
    });
    expect(response(status, 'Mon, 01 Jun 2026 12:02:00 GMT')).toMatchObject({
      retryAfterMs: 120_000,
    });
  });

  it('leaves retryAfterMs out when there is no usable Retry-After', () => {
    expect(response(503)).not.toHaveProperty('retryAfterMs');
    expect(response(503, null)).not.toHaveProperty('retryAfterMs');
    expect(response(429, 'later')).not.toHaveProperty('retryAfterMs');
    expect(response(429, '-30')).not.toHaveProperty('retryAfterMs');
  });

  it('ignores Retry-After on responses that are not retried', () => {
    expect(response(200, '7')).toEqual({ kind: 'succeeded', status: 200 });
    expect(response(400, '7')).toEqual({ kind: 'failed', status: 400, error: 'HTTP 400' });
    expect(response(301, '7')).not.toHaveProperty('retryAfterMs');
  });

  it('clamps a Retry-After that asks for more than an hour', () => {
    expect(response(429, '86400')).toMatchObject({ retryAfterMs: MAX_RETRY_AFTER_MS });
  });
});

describe('parseRetryAfter', () => {
  it('reads delay-seconds', () => {
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter('1', now)).toBe(1000);
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('0120', now)).toBe(120_000);
    expect(parseRetryAfter(' 5 ', now)).toBe(5000);
    expect(parseRetryAfter('3600', now)).toBe(3_600_000);
  });

  it('reads the preferred HTTP-date form relative to now', () => {
    expect(parseRetryAfter('Mon, 01 Jun 2026 12:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Mon, 01 Jun 2026 12:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('Tue, 02 Jun 2026 00:00:00 GMT', now)).toBe(MAX_RETRY_AFTER_MS);
    expect(parseRetryAfter('mon, 01 JUN 2026 12:00:30 gmt', now)).toBe(30_000);
  });

  it('reads the two obsolete HTTP-date forms', () => {
    expect(parseRetryAfter('Monday, 01-Jun-26 12:01:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfter('Mon Jun  1 12:01:00 2026', now)).toBe(60_000);
    expect(parseRetryAfter('Mon Jun 01 12:01:00 2026', now)).toBe(60_000);
  });

  it('reads a two-digit year as the one within 50 years of now', () => {
    // From 2026: 76 is 2076 (50 years ahead, kept); 77 would be 2077, so it is 1977.
    expect(parseRetryAfter('Wednesday, 01-Jan-76 00:00:00 GMT', now)).toBe(MAX_RETRY_AFTER_MS);
    expect(parseRetryAfter('Saturday, 01-Jan-77 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('Friday, 01-Jan-99 00:00:00 GMT', now)).toBe(0);
    // Late in a century the next one's early years lie ahead: from 2090, 10 is 2110.
    const late = new Date('2090-01-01T00:00:00Z');
    expect(parseRetryAfter('Wednesday, 01-Jan-10 00:00:00 GMT', late)).toBe(MAX_RETRY_AFTER_MS);
    expect(parseRetryAfter('Sunday, 01-Jan-90 00:00:30 GMT', late)).toBe(30_000);
  });

  it('treats a date already past as "now", not as garbage', () => {
    expect(parseRetryAfter('Mon, 01 Jun 2026 11:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', now)).toBe(0);
  });

  it('clamps to the maximum, which the caller may lower', () => {
    expect(parseRetryAfter('3601', now)).toBe(MAX_RETRY_AFTER_MS);
    expect(parseRetryAfter('999999999999999999999999', now)).toBe(MAX_RETRY_AFTER_MS);
    expect(parseRetryAfter('Fri, 01 Jan 2100 00:00:00 GMT', now)).toBe(MAX_RETRY_AFTER_MS);
    expect(parseRetryAfter('100', now, 50_000)).toBe(50_000);
    expect(parseRetryAfter('10', now, 50_000)).toBe(10_000);
  });

  it.each([
    undefined,
    null,
    '',
    '   ',
    'soon',
    '-5',
    '-0',
    '+5',
    '1.5',
    '1e3',
    '0x10',
    '12abc',
    '5 5',
    '2026-06-01T12:00:30Z', // ISO 8601 is not an HTTP-date
    'June 1, 2026 12:00:30', // nor free-form text, which Date.parse would read in local time
    'Mon, 01 Jun 2026 12:00:30', // no zone
    'Mon, 01 Jun 2026 12:00:30 CET',
    'Mon, 1 Jun 2026 12:00:30 GMT', // day needs two digits
    'Mon, 31 Feb 2026 12:00:30 GMT',
    'Mon, 01 Jun 2026 24:00:00 GMT',
    'Mon, 01 Jun 2026 12:60:00 GMT',
    'Mon, 01 Foo 2026 12:00:30 GMT',
    'Monday, 01-Jun-2026 12:00:30 GMT',
  ])('ignores %p', (value) => {
    expect(parseRetryAfter(value, now)).toBeUndefined();
  });
});
