import {
  classifyResponse,
  DEFAULT_RELAY_BACKOFF,
  relayRetryDelay,
  retryAfterMs,
} from './relay-policy';

describe('classifyResponse', () => {
  it('takes any 2xx as accepted, with the event id and whether it was a duplicate', () => {
    expect(classifyResponse(202, { data: { id: 'evt_1', duplicate: false } }, null)).toEqual({
      kind: 'accepted',
      eventId: 'evt_1',
      duplicate: false,
    });
    expect(classifyResponse(200, { data: { id: 'evt_1', duplicate: true } }, null)).toMatchObject({
      kind: 'accepted',
      duplicate: true,
    });
    expect(classifyResponse(202, 'not json', null)).toEqual({
      kind: 'accepted',
      eventId: null,
      duplicate: false,
    });
  });

  it.each([400, 409, 413, 415, 422])('takes %i as a refusal of the event for good', (status) => {
    const outcome = classifyResponse(
      status,
      { error: { code: 'IDEMPOTENCY_CONFLICT', message: 'taken' } },
      null,
    );
    expect(outcome).toEqual({
      kind: 'rejected',
      status,
      code: 'IDEMPOTENCY_CONFLICT',
      message: 'taken',
    });
  });

  it.each([401, 403, 404, 408, 425, 429, 500, 502, 503, 504])(
    'retries on %i: passing trouble or a relay misconfiguration, never a reason to drop the event',
    (status) => {
      expect(classifyResponse(status, null, null)).toMatchObject({ kind: 'retry' });
    },
  );

  it('carries Retry-After', () => {
    expect(
      classifyResponse(503, { error: { code: 'SERVICE_UNAVAILABLE', message: 'x' } }, '2'),
    ).toEqual({ kind: 'retry', reason: '503 SERVICE_UNAVAILABLE: x', retryAfterMs: 2000 });
  });
});

describe('retryAfterMs', () => {
  it('reads seconds and HTTP dates, and ignores what it cannot read', () => {
    expect(retryAfterMs('0')).toBe(0);
    expect(retryAfterMs('3')).toBe(3000);
    const now = Date.parse('2026-12-02T10:00:00Z');
    expect(retryAfterMs('Wed, 02 Dec 2026 10:00:05 GMT', now)).toBe(5000);
    expect(retryAfterMs('Wed, 02 Dec 2026 09:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs(null)).toBeUndefined();
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(retryAfterMs('-1')).toBeUndefined();
  });
});

describe('relayRetryDelay', () => {
  const backoff = DEFAULT_RELAY_BACKOFF;
  it('doubles with each failure in a row up to the cap', () => {
    expect(relayRetryDelay(backoff, 1, undefined)).toBe(250);
    expect(relayRetryDelay(backoff, 2, undefined)).toBe(500);
    expect(relayRetryDelay(backoff, 3, undefined)).toBe(1000);
    expect(relayRetryDelay(backoff, 50, undefined)).toBe(30_000);
  });

  it('waits as long as Retry-After asks when that is longer, never beyond the cap', () => {
    expect(relayRetryDelay(backoff, 1, 5000)).toBe(5000);
    expect(relayRetryDelay(backoff, 5, 100)).toBe(4000);
    expect(relayRetryDelay(backoff, 1, 3_600_000)).toBe(30_000);
  });
});
