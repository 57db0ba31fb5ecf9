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
});
