import { ConsumerLag } from './kafka-watch';
import { Reconciliation } from './ledger';
import { OrderReport } from './order';
import { ServiceUsage } from './sampler';
import { Distribution } from './stats';
import { TimelinePoint } from './timeline';

/** One measured run inside a scenario (isolation has two: without and with the neighbour). */
export interface RunReport {
  label: string;
  /** Seconds from the scenario's start to this run's (its timeline's t counts from here). */
  startSeconds: number;
  /** Seconds the load was offered for, and the offered message rate (open-loop runs). */
  loadSeconds: number;
  offeredPerSecond: number | null;
  /** Messages delivered per second, from the first scheduled event to the last delivery. */
  throughputPerSecond: number;
  peakDeliveredPerSecond: number;
  acceptedPerSecond: number;
  /** Received − scheduled: includes any time the generator or ingest fell behind. */
  latency: Distribution | null;
  /** Sent − scheduled: how far the generator itself fell behind its plan. */
  sendDelay: Distribution | null;
  /** Accepted − sent: the ingest round trip. */
  acceptLatency: Distribution | null;
  ledger: Reconciliation;
  order: OrderReport | null;
  lag: { peak: ConsumerLag | null; final: ConsumerLag | null };
  services: ServiceUsage[];
  timeline: TimelinePoint[];
}

export interface ResultTable {
  title: string;
  header: string[];
  rows: string[][];
}

export type ScenarioStatus = 'ok' | 'void' | 'error';

export interface ScenarioResult {
  scenario: string;
  status: ScenarioStatus;
  title: string;
  startedAt: string;
  durationSeconds: number;
  commit: string;
  machine: { cpus: number; memoryGb: number; node: string; platform: string };
  topology: string;
  options: Record<string, unknown>;
  /** One line for `all`'s closing table. */
  summary: string;
  /** The scenario's key figures, in display order. */
  headline: [string, string][];
  tables: ResultTable[];
  runs: RunReport[];
  services: ServiceUsage[];
  serviceLogs: {
    errors: number;
    warnings: number;
    examples: { line: string; count: number }[];
  } | null;
  harness: { eventLoopDelayP99Ms: number; eventLoopDelayMaxMs: number; cpuSeconds: number } | null;
  /** Why the run is void (empty when it is not). */
  problems: string[];
  notes: string[];
  extra: Record<string, unknown>;
  files: { json: string } | null;
}
