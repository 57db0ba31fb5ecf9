import type { DlqReason, EndpointStatus } from './model';
import { DEFAULT_RETRY_POLICY, RetryPolicy } from './retry-policy';

/**
 * Unordered delivery: the rules for one message of an endpoint without FIFO ordering (from the
 * deliveries topic or the retry schedule), the twin of `nextLaneStep` for FIFO lanes. The
 * dispatcher's delivery service wires them to the store, the guards and the attempt.
 */

/**
 * The endpoint as the dispatcher reads it, fresh, for a group of messages (the stored endpoint
 * fits as it is, so deciding allocates nothing); null or undefined once it no longer exists.
 */
export interface DeliveryEndpoint {
  status: EndpointStatus;
  /** When it was deleted; null while it exists. */
  deletedAt: Date | null;
  /** Its retry policy, whose maxAgeMs is how long a paused or disabled endpoint's messages are held; none: the default. */
  retry: Pick<RetryPolicy, 'maxAgeMs'> | null | undefined;
}

export type DeliveryStep =
  /** The endpoint is gone: the message goes to the DLQ and ends `cancelled`. */
  | { action: 'dead-letter'; reason: Extract<DlqReason, 'endpoint_deleted'>; status: 'cancelled' }
  /** Held past its endpoint's max age: the message goes to the DLQ and ends `expired`. */
  | { action: 'dead-letter'; reason: Extract<DlqReason, 'max_age'>; status: 'expired' }
  /** The endpoint is paused or disabled: held on the retry schedule (no attempt used). */
  | { action: 'hold' }
  /** Try it now, through the endpoint's guards. */
  | { action: 'send' };

/** Why the endpoint's guards did not admit the attempt now. */
export type DeliveryRefusal = 'circuit_open' | 'rate_limited';

export type RefusedDeliveryStep =
  /** A new message meeting an open circuit is skipped into the DLQ. */
  | { action: 'dead-letter'; reason: Extract<DlqReason, 'circuit_open'>; status: 'skipped' }
  /** Held on the retry schedule until the guards' time (no attempt used). */
  | { action: 'hold' };

// Steps carry no per-message data, so each is one shared object: the hot path allocates nothing.
const CANCEL: DeliveryStep = Object.freeze({
  action: 'dead-letter',
  reason: 'endpoint_deleted',
  status: 'cancelled',
});
const EXPIRE: DeliveryStep = Object.freeze({
  action: 'dead-letter',
  reason: 'max_age',
  status: 'expired',
});
const HOLD = Object.freeze({ action: 'hold' as const });
const SEND: DeliveryStep = Object.freeze({ action: 'send' });
const SKIP: RefusedDeliveryStep = Object.freeze({
  action: 'dead-letter',
  reason: 'circuit_open',
  status: 'skipped',
});

/**
 * What happens to a message now, before its guards are asked. The order of the checks is the
 * order of precedence: a deleted endpoint cancels whatever else holds; a paused or disabled
 * endpoint holds its messages until their max age, then they expire; an active one sends.
 */
export function nextDeliveryStep(
  endpoint: DeliveryEndpoint | null | undefined,
  acceptedAt: Date,
  now: Date,
): DeliveryStep {
  if (!endpoint || endpoint.deletedAt) return CANCEL;
  if (endpoint.status === 'active') return SEND;
  const maxAgeMs = (endpoint.retry ?? DEFAULT_RETRY_POLICY).maxAgeMs;
  if (now.getTime() - acceptedAt.getTime() > maxAgeMs) return EXPIRE;
  return HOLD;
}

/**
 * What happens to a message its endpoint's guards did not admit. A new message meeting an open
 * circuit is skipped into the DLQ (the endpoint is down: it is not queued up behind it); a retry,
 * hold or replay copy (`scheduled`) waits for the cooldown instead, and a rate-limited message
 * always waits for its token.
 */
export function refusedDeliveryStep(
  source: 'new' | 'scheduled',
  refusal: DeliveryRefusal,
): RefusedDeliveryStep {
  return refusal === 'circuit_open' && source === 'new' ? SKIP : HOLD;
}
