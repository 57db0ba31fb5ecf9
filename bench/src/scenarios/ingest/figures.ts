import { fmtInt, fmtMs, fmtRate } from '../../core/report';

/** The ingest targets each surface is measured against on this 2-core machine. */
export interface IngestTarget {
  eventsPerSecond: number;
  p99Ms: number;
}

export const TARGETS = {
  /** Single-event REST. */
  single: { eventsPerSecond: 10_000, p99Ms: 50 },
  /** Batch REST and gRPC. */
  batch: { eventsPerSecond: 50_000, p99Ms: 50 },
} as const satisfies Record<string, IngestTarget>;

/** One step's figures, as the verdict reads them (p99 of the request latency). */
export interface StepFigure {
  label: string;
  acceptedPerSecond: number;
  p99Ms: number | null;
}

const fastest = (steps: readonly StepFigure[]) =>
  steps.reduce<StepFigure | null>(
    (best, step) => (!best || step.acceptedPerSecond > best.acceptedPerSecond ? step : best),
    null,
  );

const describe = (step: StepFigure) =>
  `${fmtRate(step.acceptedPerSecond)}/s at ${step.label} (p99 ${fmtMs(step.p99Ms)})`;

/**
 * The target is met when some step accepted at least the target rate with its p99 under the
 * bound ("at the stated load"): throughput bought with latency beyond the bound does not count.
 * A miss says by how much the best step within the bound (`within`) fell short.
 */
export function targetVerdict(steps: readonly StepFigure[], target: IngestTarget) {
  const goal = `≥ ${fmtInt(target.eventsPerSecond)} events/s with p99 < ${target.p99Ms} ms`;
  const within = fastest(steps.filter((s) => s.p99Ms !== null && s.p99Ms < target.p99Ms));
  const overall = fastest(steps);
  const met = !!within && within.acceptedPerSecond >= target.eventsPerSecond;
  const also = overall && overall !== within ? `; fastest overall ${describe(overall)}` : '';
  const short = target.eventsPerSecond - (within?.acceptedPerSecond ?? 0);
  const text = met
    ? `${goal}: MET, ${describe(within)}`
    : within
      ? `${goal}: MISSED by ${fmtInt(short)}/s (${Math.round((100 * short) / target.eventsPerSecond)} % short), best within the bound ${describe(within)}${also}`
      : `${goal}: MISSED, no step had p99 < ${target.p99Ms} ms${also}`;
  return { met, within, text };
}
