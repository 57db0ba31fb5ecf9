/**
 * Open-loop pacing: event i is due at start + i / rate, whatever happened to the ones before it.
 * The due time is what the ledger records as "scheduled", so a generator (or a server) that
 * falls behind shows up as latency instead of silently lowering the offered load.
 */
export interface PacingPlan {
  startMs: number;
  ratePerSecond: number;
  count: number;
}

export function planEvents(ratePerSecond: number, durationSeconds: number): number {
  if (!(ratePerSecond > 0)) throw new Error(`rate must be positive, got ${ratePerSecond}`);
  if (!(durationSeconds > 0)) throw new Error(`duration must be positive, got ${durationSeconds}`);
  return Math.max(1, Math.round(ratePerSecond * durationSeconds));
}

/** When event `index` (0-based) is due. */
export function dueAt(plan: PacingPlan, index: number): number {
  return plan.startMs + (index * 1000) / plan.ratePerSecond;
}

/** How many events should have been started by `nowMs` (never more than the plan holds). */
export function dueBy(plan: PacingPlan, nowMs: number): number {
  if (nowMs < plan.startMs) return 0;
  const due = Math.floor(((nowMs - plan.startMs) * plan.ratePerSecond) / 1000) + 1;
  return Math.min(plan.count, due);
}

/** How long to wait before event `index` is due (0 when it is already late). */
export function waitFor(plan: PacingPlan, index: number, nowMs: number): number {
  return Math.max(0, dueAt(plan, index) - nowMs);
}
