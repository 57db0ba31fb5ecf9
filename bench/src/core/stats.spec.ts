import { distribution, percentile, ratePerSecond } from './stats';

describe('percentile (nearest rank)', () => {
  const hundred = Array.from({ length: 100 }, (_, i) => i + 1);

  it('picks the measured value at the rank, never an interpolation', () => {
    expect(percentile(hundred, 50)).toBe(50);
    expect(percentile(hundred, 95)).toBe(95);
    expect(percentile(hundred, 99)).toBe(99);
    expect(percentile(hundred, 100)).toBe(100);
    expect(percentile([1, 2, 3, 4], 50)).toBe(2);
    expect(percentile([1, 2, 3, 4], 51)).toBe(3);
    expect(percentile([10, 20], 99)).toBe(20);
  });

  it('gives the smallest value for p = 0 and the only value for one sample', () => {
    expect(percentile(hundred, 0)).toBe(1);
    expect(percentile([7], 50)).toBe(7);
    expect(percentile([7], 99)).toBe(7);
  });

  it('refuses no values and a p outside 0..100', () => {
    expect(() => percentile([], 50)).toThrow(/no values/);
    expect(() => percentile([1], 101)).toThrow(/0\.\.100/);
    expect(() => percentile([1], Number.NaN)).toThrow(/0\.\.100/);
  });
});

describe('distribution', () => {
  it('sorts numerically (not as strings) and summarises', () => {
    const summary = distribution([100, 9, 20, 3, 1000]);
    expect(summary).toEqual({
      count: 5,
      min: 3,
      mean: 226.4,
      p50: 20,
      p95: 1000,
      p99: 1000,
      max: 1000,
    });
  });

  it('does not reorder the caller’s array', () => {
    const values = [3, 1, 2];
    distribution(values);
    expect(values).toEqual([3, 1, 2]);
  });

  it('is null for no values', () => {
    expect(distribution([])).toBeNull();
  });

  it('finds the tail of a skewed set', () => {
    const values = [
      ...Array.from({ length: 990 }, () => 5),
      ...Array.from({ length: 10 }, () => 500),
    ];
    const summary = distribution(values)!;
    expect(summary.p50).toBe(5);
    expect(summary.p95).toBe(5);
    expect(summary.p99).toBe(5);
    expect(summary.max).toBe(500);
    values.push(500);
    expect(distribution(values)!.p99).toBe(500);
  });
});

describe('ratePerSecond', () => {
  it('divides by the window in seconds', () => {
    expect(ratePerSecond(500, 1000, 3000)).toBe(250);
  });
  it('is 0 for an empty window', () => {
    expect(ratePerSecond(5, 1000, 1000)).toBe(0);
  });
});
