import { MessageRepository } from '@hookbase/persistence';
import {
  STREAM_IN_FLIGHT_SHOWN_AFTER_MS as AFTER,
  StreamAttemptMarks,
} from './stream-attempt-marks';

/** The marks over a store that records each write (`id:attemptsBefore`, one array per write). */
function marks(fails = false) {
  const writes: string[][] = [];
  const messages = {
    showStreamAttemptsStarted: async (
      attempts: { messageId: string; attemptsBefore: number }[],
    ) => {
      writes.push(attempts.map((a) => `${a.messageId}:${a.attemptsBefore}`));
      if (fails) throw new Error('store gone');
      return { transitioned: attempts.map((a) => a.messageId), skipped: [] };
    },
  } as unknown as MessageRepository;
  return { marks: new StreamAttemptMarks(messages), writes };
}

describe('StreamAttemptMarks', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('writes nothing for attempts that end within the first window', async () => {
    const { marks: m, writes } = marks();
    const ends = [m.begin('msg_1', 0), m.begin('msg_2', 3)];
    await jest.advanceTimersByTimeAsync(AFTER - 1);
    ends.forEach((end) => end());
    await jest.advanceTimersByTimeAsync(AFTER * 4);
    expect(writes).toEqual([]);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('shows an attempt still under way after one to two windows, in one write with the others of its window', async () => {
    const { marks: m, writes } = marks();
    m.begin('msg_1', 0);
    const end2 = m.begin('msg_2', 1);
    m.begin('msg_3', 2);
    await jest.advanceTimersByTimeAsync(AFTER);
    expect(writes).toEqual([]); // under way for AFTER only: not shown yet
    end2();
    await jest.advanceTimersByTimeAsync(AFTER);
    expect(writes).toEqual([['msg_1:0', 'msg_3:2']]);
    // Written once: no timer is left while nothing is under way.
    await jest.advanceTimersByTimeAsync(AFTER * 4);
    expect(writes).toHaveLength(1);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('marks an attempt begun late in a window no sooner than one window after it began', async () => {
    const { marks: m, writes } = marks();
    m.begin('early', 0);
    await jest.advanceTimersByTimeAsync(AFTER - 1);
    m.begin('late', 0);
    await jest.advanceTimersByTimeAsync(1); // first tick: both were begun in the window just closed
    await jest.advanceTimersByTimeAsync(AFTER);
    expect(writes).toEqual([['early:0', 'late:0']]);
  });

  it('keeps ticking while attempts are begun, and a failed write only logs', async () => {
    const { marks: m, writes } = marks(true);
    m.begin('a', 0);
    await jest.advanceTimersByTimeAsync(AFTER);
    m.begin('b', 0);
    await jest.advanceTimersByTimeAsync(AFTER);
    await jest.advanceTimersByTimeAsync(AFTER);
    expect(writes).toEqual([['a:0'], ['b:0']]);
  });

  it('stops its timer at shutdown', () => {
    const { marks: m } = marks();
    m.begin('a', 0);
    expect(jest.getTimerCount()).toBe(1);
    m.onApplicationShutdown();
    expect(jest.getTimerCount()).toBe(0);
  });
});
