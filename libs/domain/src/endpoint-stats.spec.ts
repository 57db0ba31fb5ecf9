import { minuteSeries } from './endpoint-stats';

describe('an endpoint’s minute series', () => {
  const now = new Date('2026-12-02T15:30:42Z');

  it('has one entry per minute of the last hour, zero where nothing was attempted', () => {
    const stats = minuteSeries([], now);
    expect(stats.minutes).toHaveLength(60);
    expect(stats.minutes[0].minute).toBe('2026-12-02T14:31:00.000Z');
    expect(stats.minutes[59].minute).toBe('2026-12-02T15:30:00.000Z');
    expect(stats.to).toBe('2026-12-02T15:31:00.000Z');
    expect(stats.minutes.every((m) => m.succeeded === 0 && m.failed === 0)).toBe(true);
    expect(stats.successRate).toBeNull();
  });

  it('places counts in their minute and computes the success rate', () => {
    const stats = minuteSeries(
      [
        { minute: new Date('2026-12-02T15:30:00Z'), succeeded: 3, failed: 1, p50Ms: 12, maxMs: 40 },
        { minute: new Date('2026-12-02T15:00:00Z'), succeeded: 0, failed: 4, p50Ms: 5, maxMs: 9 },
      ],
      now,
    );
    expect(stats.minutes[59]).toMatchObject({ succeeded: 3, failed: 1, p50Ms: 12, maxMs: 40 });
    expect(stats.minutes[29]).toMatchObject({ succeeded: 0, failed: 4 });
    expect(stats.successRate).toBe(3 / 8);
  });

  it('drops rows outside the window', () => {
    const stats = minuteSeries(
      [{ minute: new Date('2026-12-02T13:00:00Z'), succeeded: 9, failed: 0, p50Ms: 1, maxMs: 1 }],
      now,
    );
    expect(stats.succeeded).toBe(0);
  });
});
