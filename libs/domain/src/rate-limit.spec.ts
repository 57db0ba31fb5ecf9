import { DomainError } from './errors';
import { bucketCapacity, takeToken, TokenBucket } from './rate-limit';

const t0 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

/**
 * Takes `count` tokens as a dispatcher would: on a refusal, waits exactly the `waitMs` it was
 * told and asks again. Returns when each take was granted, the refusals seen, and the bucket.
 */
function takeMany(count: number, ratePerSecond: number, start = t0, bucket?: TokenBucket) {
  let now = start;
  const grantedAt: number[] = [];
  const refusals: number[] = [];
  while (grantedAt.length < count) {
    const result = takeToken(bucket, ratePerSecond, now);
    bucket = result.bucket;
    if (result.granted) {
      grantedAt.push(now);
    } else {
      refusals.push(result.waitMs);
      now += result.waitMs;
    }
    if (refusals.length > 10 * count) throw new Error('never granted');
  }
  return { grantedAt, refusals, bucket: bucket as TokenBucket, now };
}

/** Spends the whole burst of a fresh bucket at t0. */
function drained(ratePerSecond: number): TokenBucket {
  return takeMany(Math.floor(bucketCapacity(ratePerSecond)), ratePerSecond).bucket;
}

describe('bucketCapacity', () => {
  it('is one second of rate, at least one token', () => {
    expect(bucketCapacity(10)).toBe(10);
    expect(bucketCapacity(1)).toBe(1);
    expect(bucketCapacity(2.5)).toBe(2.5);
    expect(bucketCapacity(0.5)).toBe(1);
    expect(bucketCapacity(100_000)).toBe(100_000);
  });
});

describe('takeToken', () => {
  describe('a new endpoint (no bucket)', () => {
    it('starts full and spends one token', () => {
      expect(takeToken(undefined, 10, t0)).toEqual({
        granted: true,
        bucket: { tokens: 9, updatedAt: t0 },
      });
    });

    it('starts with one token below 1/s', () => {
      expect(takeToken(undefined, 0.5, t0)).toEqual({
        granted: true,
        bucket: { tokens: 0, updatedAt: t0 },
      });
    });

    it('never mutates the bucket it is given', () => {
      const bucket = Object.freeze({ tokens: 3, updatedAt: t0 });
      expect(() => takeToken(bucket, 10, t0 + 50)).not.toThrow();
      expect(bucket).toEqual({ tokens: 3, updatedAt: t0 });
    });
  });

  describe('bursts', () => {
    it('grants a burst equal to the capacity at one instant, then refuses', () => {
      let bucket: TokenBucket | undefined;
      for (let i = 0; i < 10; i++) {
        const result = takeToken(bucket, 10, t0);
        expect(result.granted).toBe(true);
        bucket = result.bucket;
      }
      expect(bucket).toEqual({ tokens: 0, updatedAt: t0 });
      expect(takeToken(bucket, 10, t0)).toEqual({
        granted: false,
        bucket: { tokens: 0, updatedAt: t0 },
        waitMs: 100,
      });
    });

    it('refills to the capacity and no further, however long the bucket sat idle', () => {
      const idle = { tokens: 0, updatedAt: t0 };
      const { grantedAt } = takeMany(11, 10, t0 + 3_600_000, idle);
      // 10 at once after an hour idle, then the 11th has to wait for a refill.
      expect(grantedAt.slice(0, 10)).toEqual(Array(10).fill(t0 + 3_600_000));
      expect(grantedAt[10]).toBe(t0 + 3_600_100);
    });

    it('caps at once at the new capacity when the rate is lowered', () => {
      const full = { tokens: 100, updatedAt: t0 };
      expect(takeToken(full, 5, t0)).toEqual({
        granted: true,
        bucket: { tokens: 4, updatedAt: t0 },
      });
    });
  });

  describe('steady state', () => {
    it('once the burst is spent, 100 takes at 10/s span 9.9 s: exactly the rate', () => {
      const start = drained(10);
      const { grantedAt } = takeMany(100, 10, t0 + 100, start);
      expect(grantedAt[0]).toBe(t0 + 100);
      expect(grantedAt[99] - grantedAt[0]).toBe(9_900);
      const gaps = grantedAt.slice(1).map((at, i) => at - grantedAt[i]);
      expect(new Set(gaps)).toEqual(new Set([100]));
    });

    it('grants a fresh bucket 100 takes at 10/s within 9 s: the burst of 10, then 90 × 100 ms', () => {
      const { grantedAt, refusals } = takeMany(100, 10);
      expect(grantedAt[99] - t0).toBe(9_000);
      expect(refusals).toEqual(Array(90).fill(100));
    });

    it('keeps the average at the rate when waits are rounded up to whole milliseconds', () => {
      // 3/s: a token every 333.3 ms; each wait rounds up, and the surplus is kept for the next.
      const { grantedAt } = takeMany(3_000, 3, t0, drained(3));
      const span = grantedAt[2_999] - t0;
      expect(span).toBeGreaterThanOrEqual(1_000_000);
      expect(span).toBeLessThanOrEqual(1_000_001);
    });

    it('never grants more than the rate over any window beyond the burst', () => {
      // Asked every millisecond for 10 s at 7/s: at most the burst of 7 plus 7 per second.
      let bucket: TokenBucket | undefined;
      let granted = 0;
      for (let now = t0; now < t0 + 10_000; now++) {
        const result = takeToken(bucket, 7, now);
        bucket = result.bucket;
        if (result.granted) granted++;
      }
      expect(granted).toBe(7 + 69); // 9.999 s of refill at 7/s gives 69 whole tokens
    });

    it('handles a high rate: 100 000/s grants 100 per millisecond after the burst', () => {
      const start = drained(100_000);
      const { grantedAt } = takeMany(1_000, 100_000, t0, start);
      expect(grantedAt[999] - t0).toBe(10);
    });
  });

  describe('fractional rates', () => {
    it('at 0.5/s grants one take, then one every 2 s', () => {
      const { grantedAt, refusals } = takeMany(5, 0.5);
      expect(grantedAt.map((at) => at - t0)).toEqual([0, 2_000, 4_000, 6_000, 8_000]);
      expect(refusals).toEqual([2_000, 2_000, 2_000, 2_000]);
    });

    it('at 0.5/s, asked early, says how long is left', () => {
      const bucket = { tokens: 0, updatedAt: t0 };
      expect(takeToken(bucket, 0.5, t0 + 500)).toEqual({
        granted: false,
        bucket: { tokens: 0.25, updatedAt: t0 + 500 },
        waitMs: 1_500,
      });
    });

    it('at 2.5/s allows a burst of 2, then spends the half token it kept', () => {
      const { grantedAt } = takeMany(5, 2.5);
      expect(grantedAt.map((at) => at - t0)).toEqual([0, 0, 200, 600, 1_000]);
    });
  });

  describe('refusals', () => {
    it('say how long until one whole token is there', () => {
      expect(takeToken({ tokens: 0.25, updatedAt: t0 }, 10, t0)).toMatchObject({
        granted: false,
        waitMs: 75,
      });
      expect(takeToken({ tokens: 0.9, updatedAt: t0 }, 10, t0)).toMatchObject({
        granted: false,
        waitMs: 10,
      });
    });

    it('round up to a whole millisecond', () => {
      expect(takeToken({ tokens: 0, updatedAt: t0 }, 3, t0)).toMatchObject({
        granted: false,
        waitMs: 334,
      });
    });

    it('are at least 1 ms, even when the missing part would take less', () => {
      expect(takeToken({ tokens: 0.9999, updatedAt: t0 }, 1_000, t0)).toMatchObject({
        granted: false,
        waitMs: 1,
      });
    });

    it('credit the refill so far and move updatedAt to now', () => {
      expect(takeToken({ tokens: 0, updatedAt: t0 }, 10, t0 + 40)).toEqual({
        granted: false,
        bucket: { tokens: 0.4, updatedAt: t0 + 40 },
        waitMs: 60,
      });
    });

    it('are not lengthened by floating-point error', () => {
      // 0.5944 tokens at 0.1/s is exactly 5944 ms, which floating point computes as 5944.000…1.
      expect(takeToken({ tokens: 0.4056, updatedAt: t0 }, 0.1, t0)).toMatchObject({
        granted: false,
        waitMs: 5_944,
      });
    });

    it('are granted after exactly waitMs even when floating point lands a hair short', () => {
      // 0.0004 + 0.3 × 3.332 adds up to 0.9999999999999999.
      const refused = takeToken({ tokens: 0.0004, updatedAt: t0 }, 0.3, t0);
      expect(refused).toMatchObject({ granted: false, waitMs: 3_332 });
      expect(takeToken(refused.bucket, 0.3, t0 + 3_332).granted).toBe(true);
    });

    it('are granted when the caller comes back after exactly waitMs', () => {
      for (const rate of [0.3, 0.5, 1, 3, 7, 10, 33, 1_000]) {
        const refused = takeToken({ tokens: 0.123, updatedAt: t0 }, rate, t0);
        expect(refused.granted).toBe(false);
        if (refused.granted) continue;
        expect(takeToken(refused.bucket, rate, t0 + refused.waitMs).granted).toBe(true);
      }
    });
  });

  describe('a clock going backwards', () => {
    it('creates no tokens and gives no negative wait', () => {
      const bucket = { tokens: 0.5, updatedAt: t0 };
      expect(takeToken(bucket, 10, t0 - 60_000)).toEqual({
        granted: false,
        bucket: { tokens: 0.5, updatedAt: t0 - 60_000 },
        waitMs: 50,
      });
    });

    it('still grants what the bucket held', () => {
      expect(takeToken({ tokens: 2, updatedAt: t0 }, 10, t0 - 5)).toEqual({
        granted: true,
        bucket: { tokens: 1, updatedAt: t0 - 5 },
      });
    });

    it('keeps counting from the new time instead of freezing until the clock catches up', () => {
      let result = takeToken({ tokens: 0, updatedAt: t0 }, 10, t0 - 60_000);
      expect(result).toMatchObject({ granted: false, waitMs: 100 });
      result = takeToken(result.bucket, 10, t0 - 59_900);
      expect(result.granted).toBe(true);
    });

    it('never lets a step back and forth add up to more than the real time passed', () => {
      // Forward 300 ms, back 300 ms, forward 300 ms: 600 ms of real time, 6 tokens at 10/s.
      let bucket: TokenBucket = { tokens: 0, updatedAt: t0 };
      let granted = 0;
      for (const now of [t0 + 300, t0, t0 + 300]) {
        const result = takeToken(bucket, 10, now);
        if (result.granted) granted++;
        bucket = result.bucket;
      }
      expect(granted).toBe(3);
      expect(bucket.tokens).toBeCloseTo(3, 9);
    });
  });

  describe('caller bugs', () => {
    it.each([0, -1, NaN, Infinity])('refuses a rate of %p', (rate) => {
      expect(() => takeToken(undefined, rate, t0)).toThrow(DomainError);
      expect(() => takeToken(undefined, rate, t0)).toThrow(/ratePerSecond must be > 0/);
    });

    it.each([NaN, Infinity])('refuses a time of %p', (now) => {
      expect(() => takeToken(undefined, 10, now)).toThrow(/now must be a finite time/);
    });

    it('reports them as INTERNAL', () => {
      try {
        takeToken(undefined, 0, t0);
      } catch (error) {
        expect((error as DomainError).code).toBe('INTERNAL');
        return;
      }
      throw new Error('expected a DomainError');
    });
  });
});
