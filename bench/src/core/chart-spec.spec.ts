import { deliveryChart } from './chart-spec';
import { RunReport } from './result';

function run(label: string, points: [number, number, number | null][]): RunReport {
  return {
    label,
    timeline: points.map(([t, rate, latency]) => ({
      t,
      acceptedPerSecond: rate,
      deliveredPerSecond: rate,
      latencyP50Ms: latency,
      latencyP99Ms: latency,
      acceptP50Ms: 1,
      acceptP99Ms: 2,
    })),
  } as RunReport;
}

describe('deliveryChart', () => {
  const runs = [
    {
      run: run('a', [
        [0, 10, 5],
        [0.5, 20, null],
      ]),
      offsetSeconds: 2,
    },
    { run: run('b', [[0, 30, 7]]), offsetSeconds: 10 },
  ];
  const resources = [
    { at: 1000, rssMb: { standalone: 150 }, cpuSeconds: {}, lag: { dispatcher: 3, fanout: 0 } },
    { at: 2000, rssMb: { standalone: 160 }, cpuSeconds: {}, lag: null },
  ];

  it('draws a line per run, placed at the run’s offset, with a marker per run', () => {
    const spec = deliveryChart('t', 's', runs, resources, 0);
    const throughput = spec.panels[0].series;
    expect(throughput.map((s) => s.name)).toEqual([
      'published/s (a)',
      'delivered/s (a)',
      'published/s (b)',
      'delivered/s (b)',
    ]);
    expect(throughput[0].points).toEqual([
      [2, 10],
      [2.5, 20],
      [2.5, null],
    ]);
    expect(spec.markers).toEqual([
      { x: 2, label: 'a' },
      { x: 10, label: 'b' },
    ]);
    expect(spec.panels.map((p) => p.title)).toEqual([
      'Throughput',
      'Latency, received − scheduled',
      'Service memory',
      'Kafka consumer lag',
    ]);
    expect(spec.panels[2].series[0].points).toEqual([
      [1, 150],
      [2, 160],
    ]);
    expect(spec.panels[3].series[0].points).toEqual([
      [1, 3],
      [2, null],
    ]);
  });

  it('joins runs into one line (broken between runs) and shows accept latency when asked', () => {
    const spec = deliveryChart('t', 's', runs, [], 0, { combineRuns: true, latency: 'accept' });
    expect(spec.panels[0].series.map((s) => s.name)).toEqual(['accepted events/s']);
    expect(spec.panels[0].series[0].points).toEqual([
      [2, 10],
      [2.5, 20],
      [2.5, null],
      [10, 30],
      [10, null],
    ]);
    expect(spec.panels[1].title).toBe('Latency, accepted − scheduled');
    expect(spec.panels[1].series[1].points[0]).toEqual([2, 2]);
  });
});
