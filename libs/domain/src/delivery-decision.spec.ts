import { decideAfterAttempt } from './delivery-decision';
import { DEFAULT_RETRY_POLICY } from './retry-policy';

const acceptedAt = new Date('2026-01-01T00:00:00Z');
const base = {
  policy: DEFAULT_RETRY_POLICY,
  acceptedAt,
  now: acceptedAt,
  random: () => 0.5, // no jitter
};

describe('decideAfterAttempt', () => {
  it('marks a success succeeded', () => {
    expect(
      decideAfterAttempt({ ...base, outcome: { kind: 'succeeded', status: 200 }, attemptsMade: 1 }),
    ).toEqual({ status: 'succeeded' });
  });

  it('dead-letters a permanent failure at once, whatever attempts remain', () => {
    expect(
      decideAfterAttempt({
        ...base,
        outcome: { kind: 'failed', status: 404, error: 'HTTP 404' },
        attemptsMade: 1,
      }),
    ).toEqual({ status: 'failed', dlqReason: 'permanent_failure' });
  });

  it('schedules the next attempt on the policy after a retryable failure', () => {
    const decision = decideAfterAttempt({
      ...base,
      outcome: { kind: 'retry', status: 503, error: 'HTTP 503' },
      attemptsMade: 1,
    });
    expect(decision.status).toBe('awaiting_retry');
    expect(decision.status === 'awaiting_retry' && decision.nextAttemptAt.getTime()).toBe(
      acceptedAt.getTime() + 5000,
    );
  });

  it('dead-letters with max_attempts once every attempt is used', () => {
    expect(
      decideAfterAttempt({
        ...base,
        outcome: { kind: 'retry', error: 'timeout' },
        attemptsMade: DEFAULT_RETRY_POLICY.delaysMs.length,
      }),
    ).toEqual({ status: 'failed', dlqReason: 'max_attempts' });
  });

  it('dead-letters with max_age when the next attempt would come too late', () => {
    const policy = { delaysMs: [0, 60_000], maxAgeMs: 30_000 };
    expect(
      decideAfterAttempt({
        ...base,
        policy,
        outcome: { kind: 'retry', error: 'timeout' },
        attemptsMade: 1,
      }),
    ).toEqual({ status: 'failed', dlqReason: 'max_age' });
  });
});
