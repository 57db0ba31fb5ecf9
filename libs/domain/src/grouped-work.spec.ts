import { GroupedWork } from './grouped-work';

/** Lets the event loop finish its current turn (where an idle GroupedWork starts). */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Work whose groups finish when the test says so, recording what each group held. */
function controlledWork() {
  const groups: number[][] = [];
  const finishers: ((error?: Error) => void)[] = [];
  const work = (items: number[]) => {
    groups.push(items);
    return new Promise<string[]>((resolve, reject) => {
      finishers.push((error) => (error ? reject(error) : resolve(items.map((n) => `r${n}`))));
    });
  };
  const finish = async (index: number, error?: Error) => {
    finishers[index](error);
    // Let the settled group hand out its results and the next group start.
    await turn();
  };
  return { groups, work, finish };
}

describe('GroupedWork', () => {
  it('starts an idle call at the end of the turn, with the calls made in that turn', async () => {
    const { groups, work, finish } = controlledWork();
    const grouped = new GroupedWork(work);
    const first = grouped.run([1, 2]);
    const sameTurn = grouped.run([3]);
    expect(groups).toEqual([]);
    await turn();
    expect(groups).toEqual([[1, 2, 3]]);
    await finish(0);
    await expect(first).resolves.toEqual(['r1', 'r2']);
    await expect(sameTurn).resolves.toEqual(['r3']);
  });

  it('starts an idle call alone when nothing else comes in its turn', async () => {
    const { groups, work, finish } = controlledWork();
    const grouped = new GroupedWork(work);
    const first = grouped.run([1, 2]);
    await turn();
    expect(groups).toEqual([[1, 2]]);
    await finish(0);
    await expect(first).resolves.toEqual(['r1', 'r2']);
  });

  it('sends the calls made while a group is under way together, each getting its own results', async () => {
    const { groups, work, finish } = controlledWork();
    const grouped = new GroupedWork(work);
    const first = grouped.run([1]);
    await turn();
    const second = grouped.run([2, 3]);
    const third = grouped.run([4]);
    expect(groups).toEqual([[1]]);
    await finish(0);
    expect(groups).toEqual([[1], [2, 3, 4]]);
    await finish(1);
    await expect(first).resolves.toEqual(['r1']);
    await expect(second).resolves.toEqual(['r2', 'r3']);
    await expect(third).resolves.toEqual(['r4']);
  });

  it('fails only the calls of the group whose work failed, and goes on with the next', async () => {
    const { groups, work, finish } = controlledWork();
    const grouped = new GroupedWork(work);
    const first = grouped.run([1]);
    await turn();
    const second = grouped.run([2]);
    const failed = expect(first).rejects.toThrow('store down');
    await finish(0, new Error('store down'));
    await failed;
    expect(groups).toEqual([[1], [2]]);
    await finish(1);
    await expect(second).resolves.toEqual(['r2']);
  });

  it('bounds a group by maxItems without ever splitting a call', async () => {
    const { groups, work, finish } = controlledWork();
    const grouped = new GroupedWork(work, 3);
    const calls = [grouped.run([0]), grouped.run([1, 2]), grouped.run([3, 4]), grouped.run([5])];
    const big = grouped.run([6, 7, 8, 9]);
    await turn();
    await finish(0);
    await finish(1);
    await finish(2);
    expect(groups).toEqual([
      [0, 1, 2],
      [3, 4, 5],
      [6, 7, 8, 9],
    ]);
    await expect(Promise.all(calls)).resolves.toEqual([['r0'], ['r1', 'r2'], ['r3', 'r4'], ['r5']]);
    await expect(big).resolves.toEqual(['r6', 'r7', 'r8', 'r9']);
  });

  it('answers an empty call at once without running the work', async () => {
    const work = jest.fn(async (items: number[]) => items);
    await expect(new GroupedWork(work).run([])).resolves.toEqual([]);
    expect(work).not.toHaveBeenCalled();
  });

  it('fails a group whose work answers a different number of results', async () => {
    const grouped = new GroupedWork(async (items: number[]) => items.slice(1));
    await expect(grouped.run([1, 2])).rejects.toThrow('answered 1 results for 2');
  });

  it('starts again at once after going idle', async () => {
    const seen: number[][] = [];
    const grouped = new GroupedWork(async (items: number[]) => {
      seen.push(items);
      return items;
    });
    await grouped.run([1]);
    await grouped.run([2]);
    expect(seen).toEqual([[1], [2]]);
  });

  it('starts an idle call in the same turn when told to start at once', async () => {
    const { groups, work, finish } = controlledWork();
    const grouped = new GroupedWork(work, { start: 'at-once' });
    const first = grouped.run([1]);
    expect(groups).toEqual([[1]]);
    const second = grouped.run([2]);
    const third = grouped.run([3]);
    await finish(0);
    expect(groups).toEqual([[1], [2, 3]]);
    await finish(1);
    await expect(Promise.all([first, second, third])).resolves.toEqual([['r1'], ['r2'], ['r3']]);
  });

  it('takes maxItems from the options as from a bare number', async () => {
    const { groups, work, finish } = controlledWork();
    const grouped = new GroupedWork(work, { maxItems: 2 });
    const calls = [grouped.run([1]), grouped.run([2]), grouped.run([3])];
    await turn();
    await finish(0);
    await finish(1);
    expect(groups).toEqual([[1, 2], [3]]);
    await expect(Promise.all(calls)).resolves.toEqual([['r1'], ['r2'], ['r3']]);
  });

  it('answers a caller who stops waiting at once, and never works its items if still waiting', async () => {
    const { groups, work, finish } = controlledWork();
    const grouped = new GroupedWork(work, { start: 'at-once' });
    const inFlight = new AbortController();
    const queued = new AbortController();
    const first = grouped.run([1], { signal: inFlight.signal });
    const second = grouped.run([2], { signal: queued.signal });
    const third = grouped.run([3]);
    inFlight.abort(new Error('gave up on 1'));
    queued.abort(new Error('gave up on 2'));
    await expect(first).rejects.toThrow('gave up on 1');
    await expect(second).rejects.toThrow('gave up on 2');
    await finish(0);
    // The call already under way was worked; the one still waiting was left out.
    expect(groups).toEqual([[1], [3]]);
    await finish(1);
    await expect(third).resolves.toEqual(['r3']);
  });

  it('skips a group of withdrawn calls only, and goes on with the next', async () => {
    const { groups, work, finish } = controlledWork();
    const grouped = new GroupedWork(work, { maxItems: 1 });
    const first = grouped.run([1]);
    await turn();
    const gaveUp = new AbortController();
    const withdrawn = [
      grouped.run([2], { signal: gaveUp.signal }),
      grouped.run([3], { signal: gaveUp.signal }),
    ];
    const last = grouped.run([4]);
    gaveUp.abort(new Error('gave up'));
    await Promise.all(withdrawn.map((call) => expect(call).rejects.toThrow('gave up')));
    await finish(0);
    expect(groups).toEqual([[1], [4]]);
    await finish(1);
    await expect(first).resolves.toEqual(['r1']);
    await expect(last).resolves.toEqual(['r4']);
  });

  it('refuses a call whose signal aborted before it came, without running the work', async () => {
    const work = jest.fn(async (items: number[]) => items);
    const gaveUp = new AbortController();
    gaveUp.abort(new Error('too late'));
    await expect(new GroupedWork(work).run([1], { signal: gaveUp.signal })).rejects.toThrow(
      'too late',
    );
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(work).not.toHaveBeenCalled();
  });

  it('answers a caller whose signal never aborts with its results', async () => {
    const grouped = new GroupedWork(async (items: number[]) => items.map((n) => n * 10));
    const signal = new AbortController().signal;
    await expect(grouped.run([1, 2], { signal })).resolves.toEqual([10, 20]);
  });

  describe('with gatherMs', () => {
    beforeEach(() =>
      jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] }),
    );
    afterEach(() => jest.useRealTimers());

    it('waits that long when idle, so that the calls of the next milliseconds join the group', async () => {
      const { groups, work, finish } = controlledWork();
      const grouped = new GroupedWork(work, { gatherMs: 5 });
      const first = grouped.run([1]);
      await turn();
      jest.advanceTimersByTime(4);
      await turn();
      expect(groups).toEqual([]);
      const later = grouped.run([2]);
      jest.advanceTimersByTime(1);
      await turn();
      expect(groups).toEqual([[1, 2]]);
      await finish(0);
      await expect(first).resolves.toEqual(['r1']);
      await expect(later).resolves.toEqual(['r2']);
    });

    it('ends the wait for a call made with soon, taking the calls that waited', async () => {
      const { groups, work } = controlledWork();
      const grouped = new GroupedWork(work, { gatherMs: 5 });
      void grouped.run([1]);
      await turn();
      void grouped.run([2], { soon: true });
      await turn();
      expect(groups).toEqual([[1, 2]]);
      // The ended wait's timer starts nothing more.
      jest.advanceTimersByTime(5);
      await turn();
      expect(groups).toEqual([[1, 2]]);
    });

    it('ends the wait once the calls fill a group', async () => {
      const { groups, work } = controlledWork();
      const grouped = new GroupedWork(work, { gatherMs: 5, maxItems: 3 });
      void grouped.run([1, 2]);
      await turn();
      expect(groups).toEqual([]);
      void grouped.run([3]);
      await turn();
      expect(groups).toEqual([[1, 2, 3]]);
    });

    it('starts the calls made while a group is under way right after it, and waits again once idle', async () => {
      const { groups, work, finish } = controlledWork();
      const grouped = new GroupedWork(work, { gatherMs: 5 });
      void grouped.run([1]);
      jest.advanceTimersByTime(5);
      await turn();
      void grouped.run([2]);
      await finish(0);
      expect(groups).toEqual([[1], [2]]);
      await finish(1);
      void grouped.run([3]);
      await turn();
      expect(groups).toEqual([[1], [2]]);
      jest.advanceTimersByTime(5);
      await turn();
      expect(groups).toEqual([[1], [2], [3]]);
    });

    it('leaves out a call withdrawn during the wait', async () => {
      const { groups, work } = controlledWork();
      const grouped = new GroupedWork(work, { gatherMs: 5 });
      const gaveUp = new AbortController();
      const withdrawn = grouped.run([1], { signal: gaveUp.signal });
      void grouped.run([2]);
      gaveUp.abort(new Error('gave up'));
      await expect(withdrawn).rejects.toThrow('gave up');
      jest.advanceTimersByTime(5);
      await turn();
      expect(groups).toEqual([[2]]);
    });
  });
});
