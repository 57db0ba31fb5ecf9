import { DomainError } from './errors';

/**
 * A token bucket per endpoint for its `rateLimitPerSecond`. The dispatcher keeps one per endpoint
 * it owns and asks `takeToken` before each attempt; a refused attempt waits `waitMs`.
 */
export interface TokenBucket {
  tokens: number;
  updatedAt: number;
}

export type TokenGrant =
  { granted: true; bucket: TokenBucket } | { granted: false; bucket: TokenBucket; waitMs: number };

/**
 * Tolerance for floating-point error: a take that waited exactly the `waitMs` it was given must be
 * granted. Waits aim at half of it, so a wait's rounding error never lands just short.
 */
const EPSILON = 1e-6;

/** One second of rate, but at least one token: below 1/s nothing could pass otherwise. */
export function bucketCapacity(ratePerSecond: number): number {
  return Math.max(1, ratePerSecond);
}

/**
 * Capacity = one second of rate (at least 1): short bursts up to the rate, never more on average.
 * A new endpoint (no bucket yet) starts full; a refusal says how long until one token is there.
 */
export function takeToken(
  bucket: TokenBucket | undefined,
  ratePerSecond: number,
  now: number,
): TokenGrant {
  if (!Number.isFinite(ratePerSecond) || ratePerSecond <= 0) {
    // A caller's bug (no limit is no bucket): never let it turn into NaN tokens or endless waits.
    throw new DomainError('INTERNAL', `ratePerSecond must be > 0, got ${ratePerSecond}`);
  }
  if (!Number.isFinite(now)) {
    throw new DomainError('INTERNAL', `now must be a finite time in milliseconds, got ${now}`);
  }
  const capacity = bucketCapacity(ratePerSecond);
  // Time going backwards credits nothing; counting on from the new now (not the old updatedAt)
  // keeps the bucket from freezing until the clock catches up. A lowered rate caps at once.
  const elapsedMs = bucket ? Math.max(0, now - bucket.updatedAt) : 0;
  const tokens = bucket
    ? Math.min(capacity, bucket.tokens + (ratePerSecond * elapsedMs) / 1000)
    : capacity;

  if (tokens >= 1 - EPSILON) {
    // Any rounding debt is kept (tokens may be a hair below 0), so the average never drifts up.
    return { granted: true, bucket: { tokens: tokens - 1, updatedAt: now } };
  }
  const waitMs = Math.max(1, Math.ceil(((1 - EPSILON / 2 - tokens) * 1000) / ratePerSecond));
  return { granted: false, bucket: { tokens, updatedAt: now }, waitMs };
}
