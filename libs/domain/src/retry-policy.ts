import { DomainError } from './errors';

/** When to try a message again: one delay per attempt (the first is 0), within a maximum age. */
export interface RetryPolicy {
  delaysMs: number[];
  maxAgeMs: number;
}

/** 5 attempts: now, 5 s, 30 s, 2 m, 10 m (about 13 minutes); give up after 24 h in any case. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  delaysMs: [0, 5_000, 30_000, 120_000, 600_000],
  maxAgeMs: 86_400_000,
};

export const RETRY_POLICY_LIMITS = {
  maxAttempts: 20,
  maxDelayMs: 7 * 86_400_000,
  minAgeMs: 1_000,
  maxAgeMs: 30 * 86_400_000,
} as const;

/** ±10 %: spreads retries of many messages that failed together. */
const JITTER = 0.1;

export function maxAttempts(policy: RetryPolicy): number {
  return policy.delaysMs.length;
}

export function validateRetryPolicy(input: unknown): RetryPolicy {
  const problems: string[] = [];
  const value = input as Partial<RetryPolicy> | null;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new DomainError('VALIDATION_FAILED', 'retry must be an object { delaysMs, maxAgeMs }', {
      issues: [{ path: 'retry', message: 'expected an object' }],
    });
  }
  const extra = Object.keys(value).filter((key) => key !== 'delaysMs' && key !== 'maxAgeMs');
  if (extra.length > 0) problems.push(`retry: unknown field(s) ${extra.join(', ')}`);
  const { delaysMs, maxAgeMs } = value;
  if (!Array.isArray(delaysMs) || delaysMs.length === 0) {
    problems.push('retry.delaysMs: expected a non-empty array of milliseconds');
  } else {
    if (delaysMs.length > RETRY_POLICY_LIMITS.maxAttempts) {
      problems.push(`retry.delaysMs: at most ${RETRY_POLICY_LIMITS.maxAttempts} attempts`);
    }
    delaysMs.forEach((delay, index) => {
      if (!Number.isInteger(delay) || delay < 0 || delay > RETRY_POLICY_LIMITS.maxDelayMs) {
        problems.push(
          `retry.delaysMs.${index}: expected a whole number of milliseconds from 0 to ${RETRY_POLICY_LIMITS.maxDelayMs}`,
        );
      }
    });
    if (delaysMs[0] !== 0) problems.push('retry.delaysMs.0: the first attempt is immediate (0)');
  }
  if (
    !Number.isInteger(maxAgeMs) ||
    (maxAgeMs as number) < RETRY_POLICY_LIMITS.minAgeMs ||
    (maxAgeMs as number) > RETRY_POLICY_LIMITS.maxAgeMs
  ) {
    problems.push(
      `retry.maxAgeMs: expected a whole number of milliseconds from ${RETRY_POLICY_LIMITS.minAgeMs} to ${RETRY_POLICY_LIMITS.maxAgeMs}`,
    );
  }
  if (problems.length > 0) {
    throw new DomainError('VALIDATION_FAILED', `Invalid retry policy: ${problems.join('; ')}`, {
      issues: problems.map((problem) => {
        const [path, ...message] = problem.split(': ');
        return { path, message: message.join(': ') };
      }),
    });
  }
  return { delaysMs: [...(delaysMs as number[])], maxAgeMs: maxAgeMs as number };
}

/**
 * When the next attempt may start, or null when there is none: every attempt used, or the next
 * one would fall after the message's maximum age. A receiver's Retry-After is a floor.
 */
export function nextRetryAt(input: {
  policy: RetryPolicy;
  attemptsMade: number;
  firstAttemptAt: Date;
  now: Date;
  retryAfterMs?: number;
  random?: () => number;
}): Date | null {
  const { policy, attemptsMade, now } = input;
  if (attemptsMade >= maxAttempts(policy)) return null;
  const scheduled = policy.delaysMs[attemptsMade];
  const random = input.random ?? Math.random;
  const jittered = Math.round(scheduled * (1 + JITTER * (2 * random() - 1)));
  const delay = Math.max(jittered, input.retryAfterMs ?? 0);
  const next = new Date(now.getTime() + delay);
  if (next.getTime() > input.firstAttemptAt.getTime() + policy.maxAgeMs) return null;
  return next;
}
