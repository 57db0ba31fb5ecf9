import { DomainError } from './errors';
import type { ValidationIssue } from './inputs';
import {
  DEFAULT_RETRY_POLICY,
  maxAttempts,
  nextRetryAt,
  RETRY_POLICY_LIMITS,
  RetryPolicy,
  validateRetryPolicy,
} from './retry-policy';

const t0 = new Date('2026-01-01T00:00:00Z');
const at = (ms: number) => new Date(t0.getTime() + ms);
const noJitter = () => 0.5;

describe('DEFAULT_RETRY_POLICY', () => {
  it('is 5 attempts: now, 5 s, 30 s, 2 m, 10 m (about 13 minutes), within 24 hours', () => {
    expect(DEFAULT_RETRY_POLICY).toEqual({
      delaysMs: [0, 5_000, 30_000, 120_000, 600_000],
      maxAgeMs: 86_400_000,
    });
    expect(maxAttempts(DEFAULT_RETRY_POLICY)).toBe(5);
    expect(DEFAULT_RETRY_POLICY.delaysMs.reduce((sum, delay) => sum + delay, 0)).toBe(755_000);
  });

  it('cannot be changed by one of the many endpoints sharing it', () => {
    expect(() => DEFAULT_RETRY_POLICY.delaysMs.push(1)).toThrow(TypeError);
    expect(() => {
      DEFAULT_RETRY_POLICY.maxAgeMs = 1;
    }).toThrow(TypeError);
  });

  it('passes its own validation', () => {
    expect(validateRetryPolicy(DEFAULT_RETRY_POLICY)).toEqual(DEFAULT_RETRY_POLICY);
  });
});

describe('maxAttempts', () => {
  it('is one attempt per delay', () => {
    expect(maxAttempts({ delaysMs: [0], maxAgeMs: 60_000 })).toBe(1);
    expect(maxAttempts({ delaysMs: Array(20).fill(0), maxAgeMs: 60_000 })).toBe(20);
  });
});

describe('nextRetryAt', () => {
  const policy: RetryPolicy = { delaysMs: [0, 10_000, 60_000], maxAgeMs: 3_600_000 };
  const next = (over: Partial<Parameters<typeof nextRetryAt>[0]>) =>
    nextRetryAt({
      policy,
      attemptsMade: 1,
      firstAttemptAt: t0,
      now: t0,
      random: noJitter,
      ...over,
    });

  it('walks the default schedule attempt by attempt, each wait counted from the last attempt', () => {
    let now = t0;
    const waits: number[] = [];
    for (let made = 1; ; made++) {
      const retryAt = nextRetryAt({
        policy: DEFAULT_RETRY_POLICY,
        attemptsMade: made,
        firstAttemptAt: t0,
        now,
        random: noJitter,
      });
      if (!retryAt) break;
      waits.push(retryAt.getTime() - now.getTime());
      now = retryAt;
    }
    expect(waits).toEqual([5_000, 30_000, 120_000, 600_000]);
    expect(now).toEqual(at(755_000));
  });

  it('starts the first attempt at once when none was made yet', () => {
    expect(next({ attemptsMade: 0, random: () => 0.99 })).toEqual(t0);
  });

  it('counts from now, the end of the last attempt, not from the first', () => {
    expect(next({ attemptsMade: 2, now: at(90_000) })).toEqual(at(150_000));
  });

  it('returns null once every attempt is used, whatever time is left', () => {
    expect(next({ attemptsMade: 3 })).toBeNull();
    expect(next({ attemptsMade: 4 })).toBeNull();
    expect(next({ policy: DEFAULT_RETRY_POLICY, attemptsMade: 5 })).toBeNull();
    expect(
      next({ policy: { delaysMs: [0], maxAgeMs: 60_000 }, attemptsMade: 1, retryAfterMs: 0 }),
    ).toBeNull();
  });

  it('allows an attempt exactly at the maximum age and none a millisecond after', () => {
    const tight = { delaysMs: [0, 60_000], maxAgeMs: 60_000 };
    expect(next({ policy: tight })).toEqual(at(60_000));
    expect(next({ policy: tight, now: at(1) })).toBeNull();
    expect(next({ policy: { delaysMs: [0, 60_000], maxAgeMs: 59_999 } })).toBeNull();
  });

  it('measures the maximum age from the first attempt', () => {
    const firstAttemptAt = new Date(t0.getTime() - 3_550_000);
    expect(next({ firstAttemptAt })).toEqual(at(10_000)); // 3 560 s after the first: in time
    expect(next({ firstAttemptAt, attemptsMade: 2 })).toBeNull(); // 3 610 s: too late
  });

  it('keeps jitter within ±10 % of the scheduled delay', () => {
    const wait = (r: number) => next({ random: () => r })!.getTime() - t0.getTime();
    expect(wait(0)).toBe(9_000);
    expect(wait(0.25)).toBe(9_500);
    expect(wait(0.5)).toBe(10_000);
    expect(wait(0.75)).toBe(10_500);
    expect(wait(0.999_999_9)).toBe(11_000);
    for (let i = 0; i < 1_000; i++) {
      const waited = next({ random: Math.random })!.getTime() - t0.getTime();
      expect(waited).toBeGreaterThanOrEqual(9_000);
      expect(waited).toBeLessThanOrEqual(11_000);
    }
  });

  it('uses Math.random when no random source is given', () => {
    const waited = nextRetryAt({ policy, attemptsMade: 1, firstAttemptAt: t0, now: t0 })!;
    expect(waited.getTime() - t0.getTime()).toBeGreaterThanOrEqual(9_000);
    expect(waited.getTime() - t0.getTime()).toBeLessThanOrEqual(11_000);
  });

  it('waits for a Retry-After longer than the schedule', () => {
    expect(next({ retryAfterMs: 45_000 })).toEqual(at(45_000));
    // Retry-After is a floor and is not jittered.
    expect(next({ retryAfterMs: 45_000, random: () => 0 })).toEqual(at(45_000));
  });

  it('keeps the schedule when Retry-After asks for less', () => {
    expect(next({ retryAfterMs: 1_000 })).toEqual(at(10_000));
    expect(next({ retryAfterMs: 0 })).toEqual(at(10_000));
    expect(next({ retryAfterMs: 9_999, random: () => 0.99 })).toEqual(at(10_980));
  });

  it('gives up when Retry-After pushes the next attempt past the maximum age', () => {
    const short = { delaysMs: [0, 10_000], maxAgeMs: 60_000 };
    expect(next({ policy: short, retryAfterMs: 60_000 })).toEqual(at(60_000));
    expect(next({ policy: short, retryAfterMs: 60_001 })).toBeNull();
  });

  it.each([-1, 1.5, Number.NaN])('refuses attemptsMade %p as a caller bug', (attemptsMade) => {
    expect(() => next({ attemptsMade })).toThrow(expect.objectContaining({ code: 'INTERNAL' }));
  });
});

describe('validateRetryPolicy', () => {
  const issuesOf = (input: unknown): ValidationIssue[] => {
    try {
      validateRetryPolicy(input);
    } catch (error) {
      expect(error).toBeInstanceOf(DomainError);
      expect((error as DomainError).code).toBe('VALIDATION_FAILED');
      return ((error as DomainError).details as { issues: ValidationIssue[] }).issues;
    }
    throw new Error(`expected ${JSON.stringify(input)} to be refused`);
  };
  const { attempts, delayMs, maxAgeMs } = RETRY_POLICY_LIMITS;

  it('has the documented limits', () => {
    expect(RETRY_POLICY_LIMITS).toEqual({
      attempts: { min: 1, max: 20 },
      delayMs: { min: 0, max: 604_800_000 },
      maxAgeMs: { min: 60_000, max: 2_592_000_000 },
    });
  });

  it('accepts a policy within the limits and returns a copy', () => {
    const input = { delaysMs: [0, 1_000, 500, 2_000], maxAgeMs: 120_000 };
    const policy = validateRetryPolicy(input);
    expect(policy).toEqual(input);
    expect(policy).not.toBe(input);
    expect(policy.delaysMs).not.toBe(input.delaysMs);
  });

  it('accepts every limit itself', () => {
    expect(validateRetryPolicy({ delaysMs: [0], maxAgeMs: maxAgeMs.min })).toEqual({
      delaysMs: [0],
      maxAgeMs: 60_000,
    });
    const longest = {
      delaysMs: [0, ...Array(attempts.max - 1).fill(delayMs.max)],
      maxAgeMs: maxAgeMs.max,
    };
    expect(validateRetryPolicy(longest)).toEqual(longest);
  });

  it('takes the default for a field left out', () => {
    expect(validateRetryPolicy({ delaysMs: [0, 1_000] })).toEqual({
      delaysMs: [0, 1_000],
      maxAgeMs: 86_400_000,
    });
    const policy = validateRetryPolicy({ maxAgeMs: 3_600_000 });
    expect(policy).toEqual({ delaysMs: DEFAULT_RETRY_POLICY.delaysMs, maxAgeMs: 3_600_000 });
    policy.delaysMs.push(1); // a copy, not the shared frozen default
    expect(validateRetryPolicy({})).toEqual(DEFAULT_RETRY_POLICY);
  });

  it.each([
    [null, 'retry'],
    [undefined, 'retry'],
    ['0,5000', 'retry'],
    [[0, 5_000], 'retry'],
    [{ delaysMs: [0], maxAgeMs: 60_000, tries: 3 }, 'retry.tries'],
    [{ delaysMs: null }, 'retry.delaysMs'],
    [{ delaysMs: '0,5000' }, 'retry.delaysMs'],
    [{ delaysMs: [] }, 'retry.delaysMs'],
    [{ delaysMs: Array(attempts.max + 1).fill(0) }, 'retry.delaysMs'],
    [{ delaysMs: [5, 10] }, 'retry.delaysMs.0'],
    [{ delaysMs: [0, -1] }, 'retry.delaysMs.1'],
    [{ delaysMs: [0, 1.5] }, 'retry.delaysMs.1'],
    [{ delaysMs: [0, '5000'] }, 'retry.delaysMs.1'],
    [{ delaysMs: [0, null] }, 'retry.delaysMs.1'],
    [{ delaysMs: [0, Number.POSITIVE_INFINITY] }, 'retry.delaysMs.1'],
    [{ delaysMs: [0, delayMs.max + 1] }, 'retry.delaysMs.1'],
    [{ maxAgeMs: maxAgeMs.min - 1 }, 'retry.maxAgeMs'],
    [{ maxAgeMs: maxAgeMs.max + 1 }, 'retry.maxAgeMs'],
    [{ maxAgeMs: 60_000.5 }, 'retry.maxAgeMs'],
    [{ maxAgeMs: '86400000' }, 'retry.maxAgeMs'],
    [{ maxAgeMs: null }, 'retry.maxAgeMs'],
  ])('refuses %j at %s', (input, path) => {
    expect(issuesOf(input).map((issue) => issue.path)).toEqual([path]);
  });

  it('says precisely what is wrong, with every problem at once', () => {
    const input = { delaysMs: [1_000, -5, 2_000], maxAgeMs: 10, maxAge: 5 };
    expect(issuesOf(input)).toEqual([
      { path: 'retry.maxAge', message: 'unknown field (expected delaysMs, maxAgeMs)' },
      {
        path: 'retry.delaysMs.0',
        message: 'must be 0: the first attempt is sent at once (got 1000)',
      },
      {
        path: 'retry.delaysMs.1',
        message: 'must be a whole number of milliseconds from 0 to 604800000 (7 days), got -5',
      },
      {
        path: 'retry.maxAgeMs',
        message:
          'must be a whole number of milliseconds from 60000 (1 minute) to 2592000000 (30 days), got 10',
      },
    ]);
    expect(() => validateRetryPolicy(input)).toThrow(
      /^Invalid retry policy: retry\.maxAge: unknown field .*; retry\.delaysMs\.0: must be 0/,
    );
  });

  it('counts the attempts in its message', () => {
    expect(issuesOf({ delaysMs: Array(21).fill(0) })).toEqual([
      { path: 'retry.delaysMs', message: 'must hold 1 to 20 delays, one per attempt (got 21)' },
    ]);
  });
});
