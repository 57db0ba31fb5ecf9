import { buildTimeline, peakDeliveredPerSecond } from './timeline';

describe('buildTimeline', () => {
  it('buckets acceptances and deliveries by time and gives per-second rates', () => {
    const timeline = buildTimeline({
      startMs: 10_000,
      endMs: 12_000,
      bucketMs: 500,
      accepted: [10_000, 10_100, 10_600, 11_999].map((at, i) => ({
        at,
        weight: 1,
        latencyMs: i + 1,
      })),
      deliveries: [
        { at: 10_200, latencyMs: 10 },
        { at: 10_300, latencyMs: 30 },
        { at: 11_700, latencyMs: 5 },
      ],
    });
    expect(timeline).toEqual([
      {
        t: 0,
        acceptedPerSecond: 4,
        deliveredPerSecond: 4,
        latencyP50Ms: 10,
        latencyP99Ms: 30,
        acceptP50Ms: 1,
        acceptP99Ms: 2,
      },
      {
        t: 0.5,
        acceptedPerSecond: 2,
        deliveredPerSecond: 0,
        latencyP50Ms: null,
        latencyP99Ms: null,
        acceptP50Ms: 3,
        acceptP99Ms: 3,
      },
      {
        t: 1,
        acceptedPerSecond: 0,
        deliveredPerSecond: 0,
        latencyP50Ms: null,
        latencyP99Ms: null,
        acceptP50Ms: null,
        acceptP99Ms: null,
      },
      {
        t: 1.5,
        acceptedPerSecond: 2,
        deliveredPerSecond: 2,
        latencyP50Ms: 5,
        latencyP99Ms: 5,
        acceptP50Ms: 4,
        acceptP99Ms: 4,
      },
    ]);
    expect(peakDeliveredPerSecond(timeline)).toBe(4);
  });

  it('clamps stragglers into the first and last buckets instead of dropping them', () => {
    const timeline = buildTimeline({
      startMs: 0,
      endMs: 1000,
      bucketMs: 1000,
      accepted: [
        { at: -5, weight: 1, latencyMs: 1 },
        { at: 5000, weight: 3, latencyMs: 1 },
      ],
      deliveries: [],
    });
    expect(timeline).toHaveLength(1);
    expect(timeline[0].acceptedPerSecond).toBe(4);
  });

  it('gives the rate of a last bucket cut short over the time it covered', () => {
    const timeline = buildTimeline({
      startMs: 0,
      endMs: 1250,
      bucketMs: 500,
      accepted: [{ at: 1100, weight: 5, latencyMs: 1 }],
      deliveries: [],
    });
    expect(timeline.map((p) => p.acceptedPerSecond)).toEqual([0, 0, 20]);
  });

  it('always has at least one bucket', () => {
    expect(
      buildTimeline({ startMs: 5, endMs: 5, bucketMs: 1000, accepted: [], deliveries: [] }),
    ).toHaveLength(1);
  });
});
