import { Cleanup } from './cleanup';

describe('Cleanup', () => {
  it('runs every task once, newest first, and goes on after a failure', async () => {
    const cleanup = new Cleanup();
    const order: string[] = [];
    const logged: string[] = [];
    cleanup.add('stack', async () => void order.push('stack'));
    cleanup.add('broken', async () => {
      throw new Error('boom');
    });
    cleanup.add('receiver', async () => void order.push('receiver'));
    await cleanup.runAll(1000, (line) => logged.push(line));
    await cleanup.runAll(1000);
    expect(order).toEqual(['receiver', 'stack']);
    expect(logged).toEqual(['cleanup "broken" failed: boom']);
  });

  it('does not wait forever for a task that hangs', async () => {
    const cleanup = new Cleanup();
    cleanup.add('hangs', () => new Promise(() => undefined));
    const logged: string[] = [];
    await cleanup.runAll(20, (line) => logged.push(line));
    expect(logged).toEqual(['cleanup "hangs" failed: timed out']);
  });

  it('forgets a task that was done already', async () => {
    const cleanup = new Cleanup();
    let ran = false;
    const undo = cleanup.add('topics', async () => {
      ran = true;
    });
    undo();
    await cleanup.runAll();
    expect(ran).toBe(false);
  });
});
