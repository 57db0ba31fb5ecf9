import { DomainError } from './errors';
import type { ValidationIssue } from './inputs';

/**
 * When a message is tried again: `delaysMs[i]` is the wait before attempt i + 1, counted from the
 * end of the attempt before it (the first is 0: sent at once), and no attempt starts later than
 * `maxAgeMs` after the first.
 */
export interface RetryPolicy {
  delaysMs: number[];
  maxAgeMs: number;
}

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/**
 * 5 attempts: now, 5 s, 30 s, 2 m, 10 m (about 13 minutes), within 24 hours. Frozen: it is
 * shared by every endpoint without a policy of its own.
 */
export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({
  delaysMs: Object.freeze([0, 5_000, 30_000, 120_000, 600_000]) as number[],
  maxAgeMs: DAY_MS,
});

/** What an endpoint's `retry` setting may ask for. */
export const RETRY_POLICY_LIMITS = {
  attempts: { min: 1, max: 20 },
  delayMs: { min: 0, max: 7 * DAY_MS },
  maxAgeMs: { min: MINUTE_MS, max: 30 * DAY_MS },
} as const;

/** ±10 %: spreads out the retries of many messages that failed together. */
const JITTER = 0.1;

export function maxAttempts(policy: RetryPolicy): number {
  return policy.delaysMs.length;
}

/**
 * Checks an endpoint's `retry` setting and returns a copy. A field left out takes the default
 * (the design's "maxAge default 24 h"); unknown fields are refused so a typo never passes. Every
 * problem is reported at once, each with its path.
 */
export function validateRetryPolicy(input: unknown): RetryPolicy {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return refuse([{ path: 'retry', message: 'must be an object { delaysMs, maxAgeMs }' }]);
  }
  const issues: ValidationIssue[] = Object.keys(input)
    .filter((key) => key !== 'delaysMs' && key !== 'maxAgeMs')
    .map((key) => ({
      path: `retry.${key}`,
      message: 'unknown field (expected delaysMs, maxAgeMs)',
    }));
  const { delaysMs = DEFAULT_RETRY_POLICY.delaysMs, maxAgeMs = DEFAULT_RETRY_POLICY.maxAgeMs } =
    input as Partial<Record<keyof RetryPolicy, unknown>>;

  const { attempts, delayMs, maxAgeMs: age } = RETRY_POLICY_LIMITS;
  if (!Array.isArray(delaysMs)) {
    issues.push({
      path: 'retry.delaysMs',
      message: `must be an array of ${attempts.min} to ${attempts.max} delays in milliseconds`,
    });
  } else {
    if (delaysMs.length < attempts.min || delaysMs.length > attempts.max) {
      issues.push({
        path: 'retry.delaysMs',
        message: `must hold ${attempts.min} to ${attempts.max} delays, one per attempt (got ${delaysMs.length})`,
      });
    }
    delaysMs.forEach((delay: unknown, index) => {
      if (!isWholeNumberIn(delay, delayMs.min, delayMs.max)) {
        issues.push({
          path: `retry.delaysMs.${index}`,
          message: `must be a whole number of milliseconds from ${delayMs.min} to ${delayMs.max} (7 days), got ${JSON.stringify(delay)}`,
        });
      } else if (index === 0 && delay !== 0) {
        issues.push({
          path: 'retry.delaysMs.0',
          message: `must be 0: the first attempt is sent at once (got ${delay})`,
        });
      }
    });
  }
  if (!isWholeNumberIn(maxAgeMs, age.min, age.max)) {
    issues.push({
      path: 'retry.maxAgeMs',
      message: `must be a whole number of milliseconds from ${age.min} (1 minute) to ${age.max} (30 days), got ${JSON.stringify(maxAgeMs)}`,
    });
  }
  if (issues.length > 0) return refuse(issues);
  return { delaysMs: [...(delaysMs as number[])], maxAgeMs: maxAgeMs as number };
}

function isWholeNumberIn(value: unknown, min: number, max: number): value is number {
  return Number.isSafeInteger(value) && (value as number) >= min && (value as number) <= max;
}

function refuse(issues: ValidationIssue[]): never {
  const summary = issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ');
  throw new DomainError('VALIDATION_FAILED', `Invalid retry policy: ${summary}`, { issues });
}

/**
 * When the next attempt may start, after `attemptsMade` attempts of which the last ended `now`;
 * null when there is none: every attempt used, or the next one would start after the message's
 * maximum age. The scheduled delay is jittered; a receiver's Retry-After only ever lengthens it.
 */
export function nextRetryAt(input: {
  policy: RetryPolicy;
  attemptsMade: number;
  firstAttemptAt: Date;
  now: Date;
  retryAfterMs?: number;
  random?: () => number;
}): Date | null {
  const { policy, attemptsMade, firstAttemptAt, now } = input;
  if (!Number.isSafeInteger(attemptsMade) || attemptsMade < 0) {
    // A caller's bug, not a receiver's doing: never let it turn into an Invalid Date.
    throw new DomainError(
      'INTERNAL',
      `attemptsMade must be a whole number >= 0, got ${attemptsMade}`,
    );
  }
  if (attemptsMade >= maxAttempts(policy)) return null;
  const random = input.random ?? Math.random;
  const scheduled = policy.delaysMs[attemptsMade];
  const jittered = Math.round(scheduled * (1 + JITTER * (2 * random() - 1)));
  const next = now.getTime() + Math.max(jittered, input.retryAfterMs ?? 0);
  if (next > firstAttemptAt.getTime() + policy.maxAgeMs) return null;
  return new Date(next);
}
