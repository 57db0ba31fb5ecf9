/**
 * Endpoint health: a failure streak (consecutive failed attempts since the last success, and when
 * it began) and the rule that disables an endpoint which has only failed for a whole period.
 */

export const DISABLED_REASONS = ['manual', 'failing'] as const;
export type DisabledReason = (typeof DISABLED_REASONS)[number];

/** The default auto-disable period (HOOKBASE_AUTO_DISABLE_AFTER): five days. */
export const DEFAULT_AUTO_DISABLE_AFTER_MS = 5 * 24 * 3600 * 1000;
/** While all goes well, the last success is written at most this often per endpoint. */
export const LAST_SUCCESS_WRITE_INTERVAL_MS = 60_000;

/**
 * True when an active endpoint whose streak began at `failingSince` has failed for the whole
 * period (null: auto-disable is off).
 */
export function shouldAutoDisable(input: {
  status: string;
  failingSince: Date | null;
  periodMs: number | null;
  now: Date;
}): boolean {
  if (input.status !== 'active' || input.failingSince === null || input.periodMs === null) {
    return false;
  }
  return input.now.getTime() - input.failingSince.getTime() >= input.periodMs;
}

/**
 * Whether a success needs writing: always when it ends a streak; else only when the last success
 * stored (or written by this process) is older than the write interval, so the common path writes
 * once a minute per endpoint at most.
 */
export function successNeedsWrite(input: {
  consecutiveFailures: number;
  lastSuccessAt: Date | null;
  now: Date;
}): boolean {
  if (input.consecutiveFailures > 0 || input.lastSuccessAt === null) return true;
  return input.now.getTime() - input.lastSuccessAt.getTime() >= LAST_SUCCESS_WRITE_INTERVAL_MS;
}

/** Reads `5d`, `12h`, `30m`, `90s`, `1500ms` (or `off`) into milliseconds (null for off). */
export function parseDuration(text: string): number | null | undefined {
  const trimmed = text.trim().toLowerCase();
  if (trimmed === 'off') return null;
  const match = /^(\d+)(ms|s|m|h|d)$/.exec(trimmed);
  if (!match) return undefined;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] as 'ms'];
  return Number(match[1]) * unit;
}
