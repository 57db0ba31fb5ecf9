import { dueAt, dueBy, planEvents, waitFor } from './pacing';

describe('open-loop pacing', () => {
  const plan = { startMs: 10_000, ratePerSecond: 4, count: 10 };

  it('spaces events by 1/rate from the start', () => {
    expect(dueAt(plan, 0)).toBe(10_000);
    expect(dueAt(plan, 1)).toBe(10_250);
    expect(dueAt(plan, 9)).toBe(12_250);
  });

  it('counts events due so far, capped at the plan', () => {
    expect(dueBy(plan, 9_999)).toBe(0);
    expect(dueBy(plan, 10_000)).toBe(1);
    expect(dueBy(plan, 10_249)).toBe(1);
    expect(dueBy(plan, 10_250)).toBe(2);
    expect(dueBy(plan, 60_000)).toBe(10);
  });

  it('waits until the due time, and not at all when late (the lateness stays in the ledger)', () => {
    expect(waitFor(plan, 2, 10_100)).toBe(400);
    expect(waitFor(plan, 2, 11_000)).toBe(0);
  });

  it('handles fractional rates', () => {
    const slow = { startMs: 0, ratePerSecond: 0.5, count: 3 };
    expect(dueAt(slow, 2)).toBe(4000);
    expect(dueBy(slow, 3999)).toBe(2);
  });

  it('plans rate × duration events, at least one', () => {
    expect(planEvents(200, 10)).toBe(2000);
    expect(planEvents(0.1, 1)).toBe(1);
    expect(() => planEvents(0, 10)).toThrow(/rate/);
    expect(() => planEvents(10, -1)).toThrow(/duration/);
  });
});
