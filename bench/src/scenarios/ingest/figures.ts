import { fmtMs, fmtRate, fmtRatio } from '../../core/report';

/**
 * An ingest target on this 2-core machine: a share of a bound measured in the same run (the bare
 * HTTP bound of the same step, or the raw Kafka produce bound), with the request p99 under a
 * limit at that step. Absolute rates did not hold here: the bounds themselves moved with the
 * machine's load.
 */
export interface IngestTarget {
  share: number;
  bound: 'bare HTTP' | 'raw produce';
  p99Ms: number;
}

export const TARGETS = {
  /** Single-event REST: half of what a bare node:http server answers at the same step. */
  single: { share: 0.5, bound: 'bare HTTP', p99Ms: 50 },
  /** Batch REST and gRPC PublishBatch: 0.8 of raw Kafka produce. */
  batch: { share: 0.8, bound: 'raw produce', p99Ms: 50 },
} as const satisfies Record<string, IngestTarget>;

/** One step's figures, as the verdict reads them: p99 of the request, the target's bound. */
export interface StepFigure {
  label: string;
  acceptedPerSecond: number;
  p99Ms: number | null;
  /** The bound the target divides by at this step (null: not measured). */
  boundPerSecond: number | null;
}

const ratioOf = (step: StepFigure) =>
  step.boundPerSecond !== null && step.boundPerSecond > 0
    ? step.acceptedPerSecond / step.boundPerSecond
    : null;

const best = (steps: readonly StepFigure[]) =>
  steps.reduce<StepFigure | null>(
    (top, step) => (!top || (ratioOf(step) ?? -1) > (ratioOf(top) ?? -1) ? step : top),
    null,
  );

const describe = (step: StepFigure) =>
  `${fmtRatio(step.acceptedPerSecond, step.boundPerSecond)} at ${step.label} (${fmtRate(step.acceptedPerSecond)}/s of ${fmtRate(step.boundPerSecond)}/s, p99 ${fmtMs(step.p99Ms)})`;

/**
 * The target is met when some step's accepted ÷ bound reached the share with its p99 under the
 * limit: throughput bought with latency beyond it does not count. A miss says how far the best
 * step within the limit (`within`) fell short.
 */
export function targetVerdict(steps: readonly StepFigure[], target: IngestTarget) {
  const goal = `accepted ≥ ${target.share} of the ${target.bound} bound with p99 < ${target.p99Ms} ms`;
  const measured = steps.filter((s) => ratioOf(s) !== null);
  const within = best(measured.filter((s) => s.p99Ms !== null && s.p99Ms < target.p99Ms));
  const overall = best(measured);
  const met = !!within && (ratioOf(within) ?? 0) >= target.share;
  const also = overall && overall !== within ? `; best overall ${describe(overall)}` : '';
  const text = met
    ? `${goal}: MET, ${describe(within)}`
    : within
      ? `${goal}: MISSED, best within the limit ${describe(within)}${also}`
      : measured.length === 0
        ? `${goal}: not judged, no ${target.bound} bound was measured`
        : `${goal}: MISSED, no step had p99 < ${target.p99Ms} ms${also}`;
  return { met, within, text };
}
