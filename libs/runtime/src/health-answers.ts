import { Readiness } from '@hookbase/domain';

/** One dependency as `GET /health/ready` reports it. */
export interface ReportedCheck {
  name: string;
  ready: boolean;
  problem?: string;
}

/** The checks of a readiness answer, as served. */
export function reportedChecks(readiness: Readiness): ReportedCheck[] {
  return readiness.checks.map((check) =>
    check.problem === undefined
      ? { name: check.name, ready: true }
      : { name: check.name, ready: false, problem: check.problem },
  );
}

/** The message of the 503 that answers a process that is not ready. */
export function notReadyMessage(reasons: readonly string[]): string {
  return `Not ready: ${reasons.join('; ')}`;
}
