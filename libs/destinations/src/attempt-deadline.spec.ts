import { attemptDeadline } from './attempt-deadline';

describe('attemptDeadline', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('aborts with a TimeoutError when its time is up, as AbortSignal.timeout does', () => {
    const deadline = attemptDeadline(1_000);
    jest.advanceTimersByTime(999);
    expect(deadline.signal.aborted).toBe(false);
    jest.advanceTimersByTime(1);
    expect(deadline.signal.aborted).toBe(true);
    expect((deadline.signal.reason as DOMException).name).toBe('TimeoutError');
  });

  it('never aborts once cleared, and leaves no timer behind', () => {
    const deadline = attemptDeadline(1_000);
    expect(jest.getTimerCount()).toBe(1);
    deadline.clear();
    expect(jest.getTimerCount()).toBe(0);
    jest.advanceTimersByTime(5_000);
    expect(deadline.signal.aborted).toBe(false);
  });
});
