import { Backoff, backoffDelay } from './backoff';

const doubling = (baseMs: number, maxMs: number): Backoff => ({
  baseMs,
  maxMs,
  growth: 'doubling',
});
const linear = (baseMs: number, maxMs: number): Backoff => ({ baseMs, maxMs, growth: 'linear' });
const steps = (backoff: Backoff, count: number, from = 0) =>
  Array.from({ length: count }, (_, i) => backoffDelay(backoff, from + i));

describe('backoffDelay', () => {
  it('doubles from the base at step 0 up to the cap, then stays there', () => {
    expect(steps(doubling(1_000, 5_000), 6)).toEqual([1_000, 2_000, 4_000, 5_000, 5_000, 5_000]);
    expect(steps(doubling(100, 5_000), 8)).toEqual([
      100, 200, 400, 800, 1_600, 3_200, 5_000, 5_000,
    ]);
  });

  it('grows by the base per step when linear, up to the cap', () => {
    expect(steps(linear(500, 5_000), 13)).toEqual([
      0, 500, 1_000, 1_500, 2_000, 2_500, 3_000, 3_500, 4_000, 4_500, 5_000, 5_000, 5_000,
    ]);
  });

  it('keeps the numbers of each caller', () => {
    // A consumer's failed batch, attempts from 1.
    expect(steps(doubling(200, 10_000), 7, 1)).toEqual([
      400, 800, 1_600, 3_200, 6_400, 10_000, 10_000,
    ]);
    // A consumer restart, restarts from 0.
    expect(steps(doubling(1_000, 5_000), 3)).toEqual([1_000, 2_000, 4_000]);
    // PostgreSQL at boot, attempts from 1.
    expect(steps(linear(500, 5_000), 3, 1)).toEqual([500, 1_000, 1_500]);
  });

  it('never exceeds the cap nor becomes infinite or NaN, however many steps', () => {
    for (const step of [30, 53, 64, 65, 1_000, 1_000_000, Number.MAX_SAFE_INTEGER]) {
      expect(backoffDelay(doubling(200, 10_000), step)).toBe(10_000);
      expect(backoffDelay(linear(500, 5_000), step)).toBe(5_000);
      expect(backoffDelay(doubling(0, 10_000), step)).toBe(0);
    }
  });

  it('is the base when the cap is below it', () => {
    expect(backoffDelay(doubling(1_000, 300), 0)).toBe(300);
    expect(backoffDelay(linear(1_000, 300), 1)).toBe(300);
  });

  it.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])('refuses step %p', (step) => {
    expect(() => backoffDelay(doubling(100, 1_000), step)).toThrow(RangeError);
    expect(() => backoffDelay(linear(100, 1_000), step)).toThrow(RangeError);
  });

  it.each([
    [-1, 1_000],
    [100, -1],
    [Number.NaN, 1_000],
    [100, Number.NaN],
    [Number.POSITIVE_INFINITY, 1_000],
    [100, Number.POSITIVE_INFINITY],
  ])('refuses baseMs %p with maxMs %p', (baseMs, maxMs) => {
    expect(() => backoffDelay(doubling(baseMs, maxMs), 1)).toThrow(RangeError);
  });

  it('refuses a growth it does not know', () => {
    const unknown = { baseMs: 1, maxMs: 2, growth: 'tripling' } as unknown as Backoff;
    expect(() => backoffDelay(unknown, 1)).toThrow(/unknown backoff growth tripling/);
  });
});
