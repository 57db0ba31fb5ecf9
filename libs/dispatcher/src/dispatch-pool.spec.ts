import { HookbaseMetrics } from '@hookbase/runtime';
import { DispatchPool } from './dispatch-pool';

/** A task that runs until released: `started` tells whether it began. */
function holdOpen() {
  let release!: () => void;
  const state = { started: false };
  const done = new Promise<void>((resolve) => (release = resolve));
  const task = async () => {
    state.started = true;
    await done;
    return 'done';
  };
  return { task, release, state };
}

describe('DispatchPool', () => {
  afterEach(() => jest.useRealTimers());

  it('keeps a whole share free for another organization while one holds the rest', async () => {
    const pool = new DispatchPool(4, 1);
    const hung = Array.from({ length: 5 }, holdOpen);
    const runs = hung.map((h) => pool.run('a', h.task));
    await Promise.resolve();
    expect(hung.map((h) => h.state.started)).toEqual([true, true, true, false, false]);
    const other = holdOpen();
    const otherRun = pool.run('b', other.task);
    await Promise.resolve();
    expect(other.state.started).toBe(true);
    other.release();
    await expect(otherRun).resolves.toBe('done');
    hung.forEach((h) => h.release());
    await expect(Promise.all(runs)).resolves.toHaveLength(5);
    expect(pool.inUse()).toBe(0);
    expect(pool.waiting()).toBe(0);
  });

  it('gives up waiting only when the organization holds its share, and then never runs it', async () => {
    jest.useFakeTimers();
    const pool = new DispatchPool(3, 1);
    const hung = [holdOpen(), holdOpen()];
    hung.forEach((h) => void pool.run('a', h.task));
    const late = holdOpen();
    const outcome = pool.runWithinShare('a', late.task, 1_000);
    await jest.advanceTimersByTimeAsync(999);
    expect(pool.waiting('a')).toBe(1);
    await jest.advanceTimersByTimeAsync(1);
    await expect(outcome).resolves.toEqual({ ran: false });
    expect(late.state.started).toBe(false);
    expect(pool.waiting()).toBe(0);
    // The slot it would have had goes to whoever comes next, as if it had never asked.
    hung[0].release();
    await jest.advanceTimersByTimeAsync(0);
    expect(pool.inUse('a')).toBe(1);
  });

  it('waits on, past the bound, when the pool is busy but the organization is below its share', async () => {
    jest.useFakeTimers();
    const pool = new DispatchPool(2, 1);
    const others = [holdOpen(), holdOpen()];
    void pool.run('b', others[0].task);
    void pool.run('c', others[1].task);
    const mine = holdOpen();
    const outcome = pool.runWithinShare('a', mine.task, 1_000);
    await jest.advanceTimersByTimeAsync(5_000);
    expect(mine.state.started).toBe(false);
    expect(pool.waiting('a')).toBe(1);
    others[0].release();
    await jest.advanceTimersByTimeAsync(0);
    expect(mine.state.started).toBe(true);
    mine.release();
    await expect(outcome).resolves.toEqual({ ran: true, value: 'done' });
  });

  it('frees the slot when a task throws and passes the error on', async () => {
    const pool = new DispatchPool(1, 1);
    await expect(pool.run('a', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(
      pool.runWithinShare('b', () => Promise.reject(new Error('bang')), 10),
    ).rejects.toThrow('bang');
    await expect(pool.run('a', async () => 'next')).resolves.toBe('next');
    expect(pool.inUse()).toBe(0);
  });

  it('reports its slots in use and free, and its waiters, at a scrape', async () => {
    const pool = new DispatchPool(4, 1);
    const hung = Array.from({ length: 5 }, holdOpen);
    const runs = hung.map((h) => pool.run('a', h.task));
    await Promise.resolve();
    const catalog = new HookbaseMetrics({ endpointLabels: false, processMetrics: false });
    catalog.addScrapeSource(pool);
    const { text } = await catalog.scrape();
    // One organization alone holds the pool minus one share; its other two wait.
    expect(text).toContain('hookbase_dispatch_pool_slots{state="in_use"} 3');
    expect(text).toContain('hookbase_dispatch_pool_slots{state="free"} 1');
    expect(text).toContain('hookbase_dispatch_pool_waiting 2');
    hung.forEach((h) => h.release());
    await Promise.all(runs);
    expect((await catalog.scrape()).text).toContain('hookbase_dispatch_pool_waiting 0');
  });
});
