import { DomainError } from './errors';
import {
  DEFAULT_RETRY_POLICY,
  maxAttempts,
  nextRetryAt,
  RETRY_POLICY_LIMITS,
  validateRetryPolicy,
} from './retry-policy';

const t0 = new Date('2026-01-01T00:00:00Z');
const noJitter = () => 0.5;

describe('DEFAULT_RETRY_POLICY', () => {
  it('is 5 attempts over about 13 minutes within 24 hours', () => {
    expect(maxAttempts(DEFAULT_RETRY_POLICY)).toBe(5);
    const total = DEFAULT_RETRY_POLICY.delaysMs.reduce((sum, delay) => sum + delay, 0);
    expect(total).toBe(755_000);
    expect(DEFAULT_RETRY_POLICY.maxAgeMs).toBe(86_400_000);
  });
});

describe('nextRetryAt', () => {
  it('follows the schedule attempt by attempt, then stops', () => {
    const policy = DEFAULT_RETRY_POLICY;
    let now = t0;
    const waits: number[] = [];
    for (let made = 1; made <= 5; made++) {
      const next = nextRetryAt({
        policy,
        attemptsMade: made,
        firstAttemptAt: t0,
        now,
        random: noJitter,
      });
      if (!next) break;
      waits.push(next.getTime() - now.getTime());
      now = next;
    }
    expect(waits).toEqual([5_000, 30_000, 120_000, 600_000]);
  });

  it('returns null once every attempt is used', () => {
    expect(
      nextRetryAt({ policy: DEFAULT_RETRY_POLICY, attemptsMade: 5, firstAttemptAt: t0, now: t0 }),
    ).toBeNull();
  });

  it('returns null when the next attempt would pass the maximum age', () => {
    const policy = { delaysMs: [0, 60_000], maxAgeMs: 59_000 };
    expect(
      nextRetryAt({ policy, attemptsMade: 1, firstAttemptAt: t0, now: t0, random: noJitter }),
    ).toBeNull();
  });

  it('keeps jitter within ±10 %', () => {
    const policy = { delaysMs: [0, 10_000], maxAgeMs: 60_000 };
    const at = (r: number) =>
      nextRetryAt({
        policy,
        attemptsMade: 1,
        firstAttemptAt: t0,
        now: t0,
        random: () => r,
      })!.getTime() - t0.getTime();
    expect(at(0)).toBe(9_000);
    expect(at(0.999999)).toBe(11_000);
    expect(at(0.5)).toBe(10_000);
  });

  it('waits at least as long as Retry-After asks, never less than scheduled', () => {
    const policy = { delaysMs: [0, 10_000], maxAgeMs: 3_600_000 };
    const wait = (retryAfterMs: number) =>
      nextRetryAt({
        policy,
        attemptsMade: 1,
        firstAttemptAt: t0,
        now: t0,
        retryAfterMs,
        random: noJitter,
      })!.getTime() - t0.getTime();
    expect(wait(60_000)).toBe(60_000);
    expect(wait(1_000)).toBe(10_000);
  });
});

describe('validateRetryPolicy', () => {
  it('accepts a sane policy and copies it', () => {
    const input = { delaysMs: [0, 1000, 2000], maxAgeMs: 60_000 };
    const policy = validateRetryPolicy(input);
    expect(policy).toEqual(input);
    expect(policy.delaysMs).not.toBe(input.delaysMs);
  });

  it.each([
    [null, 'retry'],
    [[0], 'retry'],
    [{ delaysMs: [], maxAgeMs: 60_000 }, 'retry.delaysMs'],
    [{ delaysMs: [5, 10], maxAgeMs: 60_000 }, 'retry.delaysMs.0'],
    [{ delaysMs: [0, -1], maxAgeMs: 60_000 }, 'retry.delaysMs.1'],
    [{ delaysMs: [0, 1.5], maxAgeMs: 60_000 }, 'retry.delaysMs.1'],
    [{ delaysMs: [0, RETRY_POLICY_LIMITS.maxDelayMs + 1], maxAgeMs: 60_000 }, 'retry.delaysMs.1'],
    [{ delaysMs: Array(21).fill(0), maxAgeMs: 60_000 }, 'retry.delaysMs'],
    [{ delaysMs: [0], maxAgeMs: 10 }, 'retry.maxAgeMs'],
    [{ delaysMs: [0], maxAgeMs: RETRY_POLICY_LIMITS.maxAgeMs + 1 }, 'retry.maxAgeMs'],
    [{ delaysMs: [0] }, 'retry.maxAgeMs'],
    [{ delaysMs: [0], maxAgeMs: 60_000, tries: 3 }, 'retry'],
  ])('refuses %j naming %s', (input, path) => {
    try {
      validateRetryPolicy(input);
      throw new Error('expected a validation error');
    } catch (error) {
      expect(error).toBeInstanceOf(DomainError);
      expect((error as DomainError).code).toBe('VALIDATION_FAILED');
      const issues = ((error as DomainError).details as { issues: { path: string }[] }).issues;
      expect(issues.map((issue) => issue.path)).toContain(path);
    }
  });
});
