import {
  BACKLOG_RETURN_MAX_MS,
  backlogReturn,
  drainIntervalMs,
  handBackDue,
  meanAttemptAfter,
} from './endpoint-backlog';

describe('meanAttemptAfter', () => {
  it('starts at the first attempt', () => {
    expect(meanAttemptAfter(null, 300)).toBe(300);
  });

  it('moves a fifth of the way to each newer attempt', () => {
    expect(meanAttemptAfter(100, 600)).toBe(200);
    expect(meanAttemptAfter(200, 0)).toBe(160);
  });

  it('settles on a steady duration', () => {
    let mean: number | null = null;
    for (let n = 0; n < 60; n++) mean = meanAttemptAfter(mean, n === 0 ? 5_000 : 250);
    expect(mean).toBeCloseTo(250, 0);
  });

  it('counts a negative reading (a clock step back) as an instant attempt', () => {
    expect(meanAttemptAfter(null, -40)).toBe(0);
    expect(meanAttemptAfter(100, -40)).toBe(80);
  });
});

describe('drainIntervalMs', () => {
  it("is an attempt's mean duration over the endpoint's concurrency", () => {
    expect(drainIntervalMs({ concurrency: 10, meanAttemptMs: 500, oldestAttemptMs: 120 })).toBe(50);
  });

  it('counts an attempt in flight for longer than the mean as that long', () => {
    expect(drainIntervalMs({ concurrency: 4, meanAttemptMs: 100, oldestAttemptMs: 2_000 })).toBe(
      500,
    );
  });

  it('goes by the oldest attempt in flight before any attempt finished', () => {
    expect(drainIntervalMs({ concurrency: 2, meanAttemptMs: null, oldestAttemptMs: 900 })).toBe(
      450,
    );
  });

  it('never takes an attempt as shorter than 1 ms', () => {
    expect(drainIntervalMs({ concurrency: 1, meanAttemptMs: 0, oldestAttemptMs: 0 })).toBe(1);
    expect(drainIntervalMs({ concurrency: 1, meanAttemptMs: null, oldestAttemptMs: 0 })).toBe(1);
  });

  it('takes a concurrency below 1 as 1', () => {
    expect(drainIntervalMs({ concurrency: 0, meanAttemptMs: 80, oldestAttemptMs: 0 })).toBe(80);
  });
});

describe('handBackDue', () => {
  it('hands back once the message waited the longest wait while every slot is in an attempt', () => {
    expect(handBackDue(1_000, 1_000, 10, 10)).toBe(true);
    expect(handBackDue(5_000, 1_000, 10, 10)).toBe(true);
  });

  it('keeps a message that has not waited that long', () => {
    expect(handBackDue(999, 1_000, 10, 10)).toBe(false);
  });

  it('keeps a message whose line waits for the dispatch pool, not for the endpoint', () => {
    expect(handBackDue(60_000, 1_000, 9, 10)).toBe(false);
    expect(handBackDue(60_000, 1_000, 0, 10)).toBe(false);
  });
});

describe('backlogReturn', () => {
  const now = 1_000_000;

  it('comes back once what is ahead of it has drained', () => {
    // 12 ahead at 50 ms each: it is the 13th.
    expect(backlogReturn(now, 12, 50, 0)).toEqual({ at: now + 650, reservedUntil: now + 650 });
  });

  it('comes after the messages handed back before it, spaced at the drain interval', () => {
    const first = backlogReturn(now, 3, 100, 0);
    const second = backlogReturn(now, 3, 100, first.reservedUntil);
    const third = backlogReturn(now, 3, 100, second.reservedUntil);
    expect([first.at, second.at, third.at]).toEqual([now + 400, now + 500, now + 600]);
  });

  it('forgets a reservation that has passed', () => {
    expect(backlogReturn(now, 0, 100, now - 5_000).at).toBe(now + 100);
  });

  it('never holds longer than the longest return', () => {
    expect(backlogReturn(now, 10_000, 100, 0).at).toBe(now + BACKLOG_RETURN_MAX_MS);
    const capped = backlogReturn(now, 0, 100, now + 10 * BACKLOG_RETURN_MAX_MS);
    expect(capped).toEqual({
      at: now + BACKLOG_RETURN_MAX_MS,
      reservedUntil: now + BACKLOG_RETURN_MAX_MS,
    });
  });

  it('takes a negative count ahead as none', () => {
    expect(backlogReturn(now, -3, 100, 0).at).toBe(now + 100);
  });
});
