/** Summary of a set of measurements (milliseconds for latencies). */
export interface Distribution {
  count: number;
  min: number;
  mean: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

/**
 * The nearest-rank percentile of ascending values: the smallest value such that at least p % of
 * the values are at or below it. No interpolation, so every reported figure is one that was
 * actually measured.
 */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) throw new Error('percentile of no values');
  if (!(p >= 0 && p <= 100)) throw new Error(`percentile must be within 0..100, got ${p}`);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1];
}

/** Sorts a copy (as doubles, so numbers compare as numbers) and summarises it; null when empty. */
export function distribution(values: readonly number[] | Float64Array): Distribution | null {
  if (values.length === 0) return null;
  const sorted = Float64Array.from(values).sort();
  let sum = 0;
  for (const value of sorted) sum += value;
  return {
    count: sorted.length,
    min: sorted[0],
    mean: sum / sorted.length,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1],
  };
}

/** Events per second over a window; 0 for an empty or instantaneous window. */
export function ratePerSecond(count: number, fromMs: number, toMs: number): number {
  const seconds = (toMs - fromMs) / 1000;
  return seconds > 0 ? count / seconds : 0;
}

/** The median of the known values (null when none is known). */
export function median(values: readonly (number | null)[]): number | null {
  const known = values.filter((v): v is number => v !== null).sort((a, b) => a - b);
  if (known.length === 0) return null;
  const mid = Math.floor(known.length / 2);
  return known.length % 2 ? known[mid] : (known[mid - 1] + known[mid]) / 2;
}
