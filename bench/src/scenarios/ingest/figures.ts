import { fmtInt, fmtMs, fmtRate, fmtRatio } from '../../core/report';

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

export interface TargetVerdict {
  met: boolean;
  /** The fastest step whose p99 was within the bound (null when none was). */
  within: StepFigure | null;
  text: string;
}

function describe(step: StepFigure): string {
  return `${fmtRate(step.acceptedPerSecond)}/s at ${step.label} (p99 ${fmtMs(step.p99Ms)})`;
}

/**
 * The target is met when some step accepted at least the target rate with its p99 under the
 * bound ("at the stated load"): throughput bought with latency beyond the bound does not count.
 * A miss says by how much the best step within the bound fell short.
 */
export function targetVerdict(steps: readonly StepFigure[], target: IngestTarget): TargetVerdict {
  const goal = `≥ ${fmtInt(target.eventsPerSecond)} events/s with p99 < ${target.p99Ms} ms`;
  const within = steps
    .filter((step) => step.p99Ms !== null && step.p99Ms < target.p99Ms)
    .reduce<StepFigure | null>(
      (best, step) => (!best || step.acceptedPerSecond > best.acceptedPerSecond ? step : best),
      null,
    );
  const fastest = steps.reduce<StepFigure | null>(
    (best, step) => (!best || step.acceptedPerSecond > best.acceptedPerSecond ? step : best),
    null,
  );
  if (within && within.acceptedPerSecond >= target.eventsPerSecond)
    return { met: true, within, text: `${goal}: MET, ${describe(within)}` };
  const also = fastest && fastest !== within ? `; fastest overall ${describe(fastest)}` : '';
  if (!within)
    return {
      met: false,
      within,
      text: `${goal}: MISSED, no step had p99 < ${target.p99Ms} ms${also}`,
    };
  const short = target.eventsPerSecond - within.acceptedPerSecond;
  return {
    met: false,
    within,
    text: `${goal}: MISSED by ${fmtInt(short)}/s (${Math.round((100 * short) / target.eventsPerSecond)} % short), best within the bound ${describe(within)}${also}`,
  };
}

/** accepted ÷ raw as "0.12", or "–" without a raw figure. */
export const ratio = (accepted: number, raw: number): string => fmtRatio(accepted, raw);

/**
 * A headline row when the target lies above the raw Kafka produce rate measured in the same run:
 * kafkajs alone, producing envelope-sized records and nothing else, reached less than the target
 * asks of ingest, which also parses, validates and answers every event. Empty otherwise.
 */
export function rawTargetRow(target: IngestTarget, rawPerSecond: number): [string, string][] {
  if (!(rawPerSecond > 0) || target.eventsPerSecond <= rawPerSecond) return [];
  return [
    [
      'target vs raw produce',
      `the target (${fmtInt(target.eventsPerSecond)}/s) is above the raw Kafka produce rate (${fmtRate(rawPerSecond)}/s) measured in this run: kafkajs alone produced less on this machine`,
    ],
  ];
}
