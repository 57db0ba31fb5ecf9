/** One minute of an endpoint's attempts, as the store counts them. */
export interface AttemptMinute {
  minute: Date;
  succeeded: number;
  failed: number;
  p50Ms: number | null;
  maxMs: number | null;
}

export const ENDPOINT_STATS_MINUTES = 60;

/**
 * The last `minutes` whole minutes up to `now`, oldest first, each with its counts (zero when the
 * store had no attempt in it), and the success rate over them (null when there was no attempt).
 * Attempts that will be retried count as failed: what the receiver answered is what is charted.
 */
export function minuteSeries(rows: AttemptMinute[], now: Date, minutes = ENDPOINT_STATS_MINUTES) {
  const last = Math.floor(now.getTime() / 60_000) * 60_000;
  const first = last - (minutes - 1) * 60_000;
  const byMinute = new Map(rows.map((row) => [row.minute.getTime(), row]));
  const series = Array.from({ length: minutes }, (_, index) => {
    const at = first + index * 60_000;
    const row = byMinute.get(at);
    return {
      minute: new Date(at).toISOString(),
      succeeded: row?.succeeded ?? 0,
      failed: row?.failed ?? 0,
      p50Ms: row?.p50Ms ?? null,
      maxMs: row?.maxMs ?? null,
    };
  });
  const succeeded = series.reduce((sum, m) => sum + m.succeeded, 0);
  const failed = series.reduce((sum, m) => sum + m.failed, 0);
  return {
    from: new Date(first).toISOString(),
    to: new Date(last + 60_000).toISOString(),
    minutes: series,
    succeeded,
    failed,
    successRate: succeeded + failed === 0 ? null : succeeded / (succeeded + failed),
  };
}
