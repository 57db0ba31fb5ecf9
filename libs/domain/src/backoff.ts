/**
 * How long to wait before trying an operation again after a failure: the one formula every
 * in-process retry loop uses (a consumer's failed batch, a consumer restart, a FIFO lane's
 * failed step, a redelivery, PostgreSQL at boot). Delivery retries to a receiver follow the
 * retry schedule instead (retry-policy.ts).
 */
export interface Backoff {
  /** The delay's unit: the delay at step 1 (and, doubling, at step 0 too). */
  baseMs: number;
  /** No delay is longer. */
  maxMs: number;
  /** `doubling`: baseMs × 2^step. `linear`: baseMs × step. */
  growth: 'doubling' | 'linear';
}

// 2^64 times any base is finite and beyond any cap a caller sets; larger exponents add nothing.
const MAX_EXPONENT = 64;

/** The delay before retrying at `step` (the caller's count of attempts or failures so far). */
export function backoffDelay(backoff: Backoff, step: number): number {
  const { baseMs, maxMs, growth } = backoff;
  if (!Number.isInteger(step) || step < 0) {
    throw new RangeError(`backoff step must be a whole number ≥ 0, got ${step}`);
  }
  if (!(baseMs >= 0) || !(maxMs >= 0) || !Number.isFinite(baseMs) || !Number.isFinite(maxMs)) {
    throw new RangeError(`backoff needs finite baseMs and maxMs ≥ 0, got ${baseMs} and ${maxMs}`);
  }
  switch (growth) {
    case 'doubling':
      return Math.min(baseMs * 2 ** Math.min(step, MAX_EXPONENT), maxMs);
    case 'linear':
      return Math.min(baseMs * step, maxMs);
    default: {
      const unreachable: never = growth;
      throw new Error(`unknown backoff growth ${String(unreachable)}`);
    }
  }
}
