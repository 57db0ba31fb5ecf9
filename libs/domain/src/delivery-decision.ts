import type { AttemptOutcome } from './attempt-outcome';
import type { DlqReason, MessageStatus } from './model';
import { maxAttempts, nextRetryAt, RetryPolicy } from './retry-policy';

export type DeliveryDecision =
  | { status: Extract<MessageStatus, 'succeeded'> }
  | { status: Extract<MessageStatus, 'awaiting_retry'>; nextAttemptAt: Date }
  | { status: Extract<MessageStatus, 'failed'>; dlqReason: DlqReason };

/**
 * What a message becomes after an attempt: delivered, scheduled for another attempt, or failed
 * for good with the reason it is dead-lettered under.
 */
export function decideAfterAttempt(input: {
  outcome: AttemptOutcome;
  policy: RetryPolicy;
  attemptsMade: number;
  acceptedAt: Date;
  now: Date;
  random?: () => number;
}): DeliveryDecision {
  const { outcome } = input;
  switch (outcome.kind) {
    case 'succeeded':
      return { status: 'succeeded' };
    case 'failed':
      return { status: 'failed', dlqReason: 'permanent_failure' };
    case 'retry': {
      const next = nextRetryAt({
        policy: input.policy,
        attemptsMade: input.attemptsMade,
        firstAttemptAt: input.acceptedAt,
        now: input.now,
        retryAfterMs: outcome.retryAfterMs,
        random: input.random,
      });
      if (next) return { status: 'awaiting_retry', nextAttemptAt: next };
      const exhausted = input.attemptsMade >= maxAttempts(input.policy);
      return { status: 'failed', dlqReason: exhausted ? 'max_attempts' : 'max_age' };
    }
    default: {
      const unreachable: never = outcome;
      throw new Error(`unknown outcome ${JSON.stringify(unreachable)}`);
    }
  }
}
