import { ChartPanel, ChartSeries, ChartSpec } from './chart';
import { RunReport } from './result';
import { ResourcePoint } from './sampler';
import { TimelinePoint } from './timeline';

const PALETTE = [
  '#1f77b4',
  '#d62728',
  '#2ca02c',
  '#ff7f0e',
  '#9467bd',
  '#8c564b',
  '#17becf',
  '#7f7f7f',
];

export interface PlacedRun {
  run: RunReport;
  /** Seconds from the scenario's time zero to the run's start. */
  offsetSeconds: number;
}

export interface ChartOptions {
  /** Draw consecutive runs as one line each (ingest-rest's steps) instead of a line per run. */
  combineRuns?: boolean;
  /** Which latency the second panel shows: of deliveries, or of acceptance (no deliveries). */
  latency?: 'delivery' | 'accept';
}

type Pick = (p: TimelinePoint) => number | null;

/**
 * The chart every delivery scenario writes: throughput and latency over time for each run, plus
 * the services' memory and the consumer lag, on one time axis (seconds since the scenario began).
 */
export function deliveryChart(
  title: string,
  subtitle: string,
  runs: readonly PlacedRun[],
  resources: readonly ResourcePoint[],
  zeroMs: number,
  options: ChartOptions = {},
): ChartSpec {
  let color = 0;
  const next = () => PALETTE[color++ % PALETTE.length];
  const groups: PlacedRun[][] = options.combineRuns ? [[...runs]] : runs.map((run) => [run]);
  const line = (group: PlacedRun[], name: string, pick: Pick): ChartSeries => ({
    name: group.length === 1 && runs.length > 1 ? `${name} (${group[0].run.label})` : name,
    color: next(),
    // A null between runs breaks the line where one run ends and the next begins.
    points: group.flatMap(({ run, offsetSeconds }) => [
      ...run.timeline.map((p) => [offsetSeconds + p.t, pick(p)] as const),
      [offsetSeconds + (run.timeline.at(-1)?.t ?? 0), null] as const,
    ]),
  });
  const accept = options.latency === 'accept';
  const throughput: ChartSeries[] = [];
  const latency: ChartSeries[] = [];
  for (const group of groups) {
    throughput.push(
      line(group, accept ? 'accepted events/s' : 'published/s', (p) => p.acceptedPerSecond),
    );
    if (!accept) throughput.push(line(group, 'delivered/s', (p) => p.deliveredPerSecond));
    latency.push(
      line(group, 'p50', (p) => (accept ? p.acceptP50Ms : p.latencyP50Ms)),
      line(group, 'p99', (p) => (accept ? p.acceptP99Ms : p.latencyP99Ms)),
    );
  }
  const seconds = (p: ResourcePoint) => (p.at - zeroMs) / 1000;
  const names = [...new Set(resources.flatMap((p) => Object.keys(p.rssMb)))];
  const memory: ChartSeries[] = names.map((name) => ({
    name,
    color: next(),
    points: resources.map((p) => [seconds(p), p.rssMb[name] ?? null]),
  }));
  const lag: ChartSeries[] = [
    {
      name: 'dispatcher',
      color: next(),
      points: resources.map((p) => [seconds(p), p.lag?.dispatcher ?? null]),
    },
    {
      name: 'fan-out',
      color: next(),
      points: resources.map((p) => [seconds(p), p.lag?.fanout ?? null]),
    },
  ];
  const panels: ChartPanel[] = [
    { title: 'Throughput', unit: 'per second', series: throughput },
    {
      title: accept ? 'Latency, accepted − scheduled' : 'Latency, received − scheduled',
      unit: 'ms',
      series: latency,
    },
  ];
  if (memory.length > 0) panels.push({ title: 'Service memory', unit: 'RSS, MB', series: memory });
  panels.push({ title: 'Kafka consumer lag', unit: 'records', series: lag });
  return {
    title,
    subtitle,
    xLabel: 'seconds since the scenario started',
    panels,
    markers: runs.map(({ run, offsetSeconds }) => ({ x: offsetSeconds, label: run.label })),
  };
}
