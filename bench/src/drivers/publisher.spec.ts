import { benchPayload, runLanes, runOpenLoop } from './publisher';

describe('benchPayload', () => {
  it('carries the sequence number and pads to about the asked size', () => {
    expect(JSON.stringify(benchPayload(42, 256)).length).toBe(256);
    expect(benchPayload(7, 0)).toEqual({ s: 7 });
  });
});

describe('runOpenLoop', () => {
  it('schedules by plan, never over the in-flight bound, and stops at the count', async () => {
    let inFlight = 0;
    let peak = 0;
    const scheduled: number[] = [];
    const result = await runOpenLoop({
      ratePerSecond: 2000,
      count: 40,
      maxInFlight: 3,
      deadlineMs: Date.now() + 10_000,
      send: async (_, scheduledAt) => {
        scheduled.push(scheduledAt);
        inFlight++;
        peak = Math.max(peak, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 2));
        inFlight--;
      },
    });
    expect(result.started).toBe(40);
    expect(peak).toBeLessThanOrEqual(3);
    // The planned times, 0.5 ms apart, whatever the waiting for slots did.
    expect(scheduled[39] - scheduled[0]).toBeCloseTo(19.5, 5);
  });

  it('stops at the deadline', async () => {
    const result = await runOpenLoop({
      ratePerSecond: 1,
      count: 1000,
      maxInFlight: 1,
      deadlineMs: Date.now() - 1,
      send: async () => undefined,
    });
    expect(result).toMatchObject({ started: 0, stoppedByDeadline: true });
  });
});

describe('runLanes', () => {
  it('never has two sends of one lane in flight and keeps each lane in order', async () => {
    const busy = new Set<number>();
    const order = new Map<number, number[]>();
    let overlap = false;
    await runLanes({
      lanes: [0, 1, 2, 3, 4],
      perLane: 5,
      workers: 2,
      deadlineMs: Date.now() + 10_000,
      send: async (lane, index) => {
        if (busy.has(lane)) overlap = true;
        busy.add(lane);
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 3));
        order.set(lane, [...(order.get(lane) ?? []), index]);
        busy.delete(lane);
      },
    });
    expect(overlap).toBe(false);
    for (const lane of [0, 1, 2, 3, 4]) expect(order.get(lane)).toEqual([0, 1, 2, 3, 4]);
  });
});
