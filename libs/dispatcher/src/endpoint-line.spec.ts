import { BACKLOG_RETURN_MAX_MS } from '@hookbase/domain';
import { EndpointLine, LineOutcome } from './endpoint-line';

describe('EndpointLine', () => {
  beforeEach(() => jest.useFakeTimers({ now: new Date('2026-01-01T00:00:00Z') }));
  afterEach(() => jest.useRealTimers());

  /** An attempt the test ends: `finish` resolves it. */
  function heldAttempt(line: EndpointLine) {
    let finish = () => undefined as void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    return { run: () => line.attempt(() => done), finish: () => finish() };
  }

  it('never runs more than its concurrency at once, runs the rest in arrival order, and frees a slot when a task throws', async () => {
    const line = new EndpointLine(3, 60_000);
    let running = 0;
    let peak = 0;
    const started: number[] = [];
    const releases: (() => void)[] = [];
    const turns = Array.from({ length: 10 }, (_, i) =>
      line.run(async () => {
        running++;
        peak = Math.max(peak, running);
        started.push(i);
        await new Promise<void>((resolve) => releases.push(resolve));
        running--;
        return i;
      }),
    );
    for (let released = 0; released < 10; released++) {
      while (releases.length === 0) await Promise.resolve();
      releases.shift()!();
      await Promise.resolve();
    }
    expect(await Promise.all(turns)).toEqual(
      Array.from({ length: 10 }, (_, i) => ({ ran: true, value: i })),
    );
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(peak).toBe(3);

    const one = new EndpointLine(1, 60_000);
    await expect(one.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(one.run(async () => 'next')).resolves.toEqual({ ran: true, value: 'next' });
  });

  it('hands back the messages that waited the longest wait behind its own attempts, spaced at its drain rate', async () => {
    const line = new EndpointLine(2, 1_000);
    const attempts = [heldAttempt(line), heldAttempt(line)];
    const inFlight = attempts.map((a) => line.run(a.run));
    await jest.advanceTimersByTimeAsync(400);
    const task = jest.fn(async () => undefined);
    const early = [line.run(task), line.run(task)];
    await jest.advanceTimersByTimeAsync(300);
    const late = line.run(task);
    expect(line.waitingCount).toBe(3);

    // The first two have waited a second: the attempts in flight are 1.4 s old (nothing finished
    // yet to go by), so the endpoint takes 0.7 s a message; 2 in flight and 1 still waiting are
    // ahead of them.
    await jest.advanceTimersByTimeAsync(699);
    expect(line.waitingCount).toBe(3);
    await jest.advanceTimersByTimeAsync(1);
    const now = Date.now();
    expect(await Promise.all(early)).toEqual([
      { ran: false, until: new Date(now + 4 * 700) },
      { ran: false, until: new Date(now + 5 * 700) },
    ]);
    expect(line.waitingCount).toBe(1);
    expect(task).not.toHaveBeenCalled();

    // An attempt ends: the last one waiting takes its slot.
    attempts[0].finish();
    expect(await late).toEqual({ ran: true, value: undefined });
    expect(task).toHaveBeenCalledTimes(1);
    attempts[1].finish();
    await Promise.all(inFlight);
  });

  it('goes by the mean of the attempts that finished', async () => {
    const line = new EndpointLine(1, 1_000);
    for (let n = 0; n < 3; n++) {
      const attempt = heldAttempt(line);
      const turn = line.run(attempt.run);
      await jest.advanceTimersByTimeAsync(200);
      attempt.finish();
      await turn;
    }
    const slow = heldAttempt(line);
    const inFlight = line.run(slow.run);
    const waiting = line.run(async () => undefined);
    await jest.advanceTimersByTimeAsync(1_000);
    // The attempt in flight is 1 s old, longer than the mean of 200 ms: it counts as 1 s.
    expect(await waiting).toEqual({ ran: false, until: new Date(Date.now() + 2 * 1_000) });
    slow.finish();
    await inFlight;
  });

  it('keeps the messages whose slots wait for something else than an attempt (the dispatch pool)', async () => {
    const line = new EndpointLine(1, 1_000);
    let grant = () => undefined as void;
    const pool = new Promise<void>((resolve) => (grant = resolve));
    // Holds the slot without an attempt in flight, as a message waiting for the pool does.
    const first = line.run(async () => {
      await pool;
      return 'first';
    });
    const second = line.run(async () => 'second');
    await jest.advanceTimersByTimeAsync(30_000);
    expect(line.waitingCount).toBe(1);
    grant();
    expect(await Promise.all([first, second])).toEqual([
      { ran: true, value: 'first' },
      { ran: true, value: 'second' },
    ]);
  });

  it('never hands back for longer than the longest return', async () => {
    const line = new EndpointLine(1, 1_000);
    const attempt = heldAttempt(line);
    const inFlight = line.run(attempt.run);
    await jest.advanceTimersByTimeAsync(10 * BACKLOG_RETURN_MAX_MS);
    const waiting: Promise<LineOutcome<void>> = line.run(async () => undefined);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(await waiting).toEqual({
      ran: false,
      until: new Date(Date.now() + BACKLOG_RETURN_MAX_MS),
    });
    attempt.finish();
    await inFlight;
  });

  it('leaves no timer behind once its line is empty', async () => {
    const line = new EndpointLine(1, 1_000);
    const attempt = heldAttempt(line);
    const inFlight = line.run(attempt.run);
    const next = line.run(async () => 'next');
    expect(jest.getTimerCount()).toBe(1);
    attempt.finish();
    await inFlight;
    expect(await next).toEqual({ ran: true, value: 'next' });
    expect(jest.getTimerCount()).toBe(0);
  });
});
