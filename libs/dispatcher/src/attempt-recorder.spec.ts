import { AttemptRecord, MessageRepository } from '@hookbase/persistence';
import { ATTEMPT_GATHER_MS, AttemptRecorder } from './attempt-recorder';

const attempt = (messageId: string): AttemptRecord =>
  ({ messageId, attemptNumber: 1, outcome: 'succeeded' }) as unknown as AttemptRecord;

/** A recorder over a store that keeps each write's message ids. */
function recorder() {
  const writes: string[][] = [];
  const messages = {
    recordAttempts: async (records: AttemptRecord[]) => {
      writes.push(records.map((r) => r.messageId));
    },
  } as unknown as MessageRepository;
  return { writes, recorder: new AttemptRecorder(messages) };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('AttemptRecorder', () => {
  beforeEach(() =>
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] }),
  );
  afterEach(() => jest.useRealTimers());

  it('writes the attempts that end within a few milliseconds of each other together', async () => {
    const { writes, recorder: attempts } = recorder();
    const first = attempts.record(attempt('msg_1'));
    jest.advanceTimersByTime(ATTEMPT_GATHER_MS - 1);
    await turn();
    expect(writes).toEqual([]);
    const second = attempts.record(attempt('msg_2'));
    jest.advanceTimersByTime(1);
    await Promise.all([first, second]);
    expect(writes).toEqual([['msg_1', 'msg_2']]);
  });

  it('writes an attempt asked for soon without waiting, with those that waited', async () => {
    const { writes, recorder: attempts } = recorder();
    const waiting = attempts.record(attempt('msg_1'));
    await attempts.record(attempt('msg_2'), { soon: true });
    await waiting;
    expect(writes).toEqual([['msg_1', 'msg_2']]);
  });
});
