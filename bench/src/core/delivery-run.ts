import { now } from './util';
import { Ledger } from './ledger';
import { RunReport } from './result';
import { BenchSession } from './session';

/** One measured run of a delivery scenario, as the scenario declares it. */
export interface DeliveryRunSpec {
  label: string;
  ledger: Ledger;
  /** Events the load plans, for the progress line (null when unknown). */
  planned: number | null;
  offeredPerSecond: number | null;
  /** The load: resolves once its last event is answered. */
  load(): Promise<{ stoppedByDeadline: boolean }>;
  /** Deliveries must settle this long after the load (and by `drainByMs`, when given). */
  drainSeconds: number;
  drainByMs?: number;
  trackOrder?: boolean;
  /** After the drain, before the report: what must end before the next run begins. */
  afterDrain?(): Promise<void>;
}

export interface DeliveryRun {
  run: RunReport;
  /** The ledger's problems, an unsettled drain, a load cut at its deadline; each with the label. */
  problems: string[];
  startMs: number;
  loadEndMs: number;
}

/**
 * The loop every delivery scenario shares once its endpoints exist: load → drain (until the
 * ledger settles, polled, bounded) → reconcile (the ledger) → the run's report.
 */
export async function deliveryRun(
  session: BenchSession,
  spec: DeliveryRunSpec,
): Promise<DeliveryRun> {
  const { label, ledger } = spec;
  session.watch(`${label}: load`, [ledger], spec.planned);
  const startMs = now();
  const load = await spec.load();
  const loadEndMs = now();
  session.watch(`${label}: draining`, [ledger], null);
  const drainBy = Math.min(loadEndMs + spec.drainSeconds * 1000, spec.drainByMs ?? Infinity);
  const settled = await session.drain([ledger], drainBy);
  await spec.afterDrain?.();
  const window = { label, startMs, loadEndMs, offeredPerSecond: spec.offeredPerSecond };
  const run = await session.report(window, ledger, spec.trackOrder);
  const problems = run.ledger.problems.map((p) => `${label}: ${p}`);
  if (!settled) problems.push(`${label}: deliveries did not settle in time after the load`);
  if (load.stoppedByDeadline) problems.push(`${label}: the load stopped at its deadline`);
  return { run, problems, startMs, loadEndMs };
}
