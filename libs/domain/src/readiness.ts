/** What one dependency of a service answered when asked whether it can do its job now. */
export interface ReadinessCheck {
  /** The dependency, e.g. `postgresql`, `kafka`, `kafka-consumer:dispatcher`. */
  name: string;
  /** Why it cannot serve now; absent when it can. */
  problem?: string;
}

export type Readiness =
  | { ready: true; checks: ReadinessCheck[] }
  | { ready: false; checks: ReadinessCheck[]; reasons: string[] };

/**
 * A service is ready only when every check passed; the reasons name each failing dependency with
 * its problem, in the order the checks were given, so an operator reads what to fix first.
 */
export function readinessOf(checks: readonly ReadinessCheck[]): Readiness {
  const reasons = checks
    .filter((check) => check.problem !== undefined)
    .map((check) => `${check.name}: ${check.problem}`);
  const listed = checks.map((check) => ({ ...check }));
  return reasons.length === 0
    ? { ready: true, checks: listed }
    : { ready: false, checks: listed, reasons };
}
