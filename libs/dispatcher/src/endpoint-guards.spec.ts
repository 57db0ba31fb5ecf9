import { Logger } from '@nestjs/common';
import { loadConfig } from '@hookbase/config';
import { HookbaseMetrics, NO_METRICS } from '@hookbase/runtime';
import { DispatchSlots, SlotOutcome } from './dispatch-pool';
import { EndpointGuards } from './endpoint-guards';

/** The guards with the dispatch pool replaced; circuits and buckets are their own memory. */
describe('EndpointGuards', () => {
  const COOLDOWN_MS = 30_000;
  const free = { id: 'ep_1', rateLimitPerSecond: null };

  beforeEach(() => jest.useFakeTimers({ now: new Date('2026-01-01T00:00:00Z') }));
  afterEach(() => {
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  function guards(slots: Partial<DispatchSlots> = {}, endpointConcurrency = 2) {
    const config = loadConfig({});
    Object.assign(config.delivery, {
      circuit: { failureThreshold: 3, cooldownMs: COOLDOWN_MS },
      endpointConcurrency,
    });
    const asked: string[] = [];
    const pool: DispatchSlots = {
      run: async (organizationId, task) => {
        asked.push(`run:${organizationId}`);
        return task();
      },
      runWithinShare: async <T>(organizationId: string, task: () => Promise<T>) => {
        asked.push(`share:${organizationId}`);
        return { ran: true, value: await task() } as SlotOutcome<T>;
      },
      ...slots,
    };
    return { guards: new EndpointGuards(config, pool), asked };
  }

  const failThrice = (g: EndpointGuards, endpointId = 'ep_1') => {
    for (let i = 0; i < 3; i++) g.afterAttempt(endpointId, 'retry');
  };

  it('admits an endpoint with a closed circuit and no rate limit at once', async () => {
    const { guards: g } = guards();
    expect(await g.admit(free)).toBe(true);
    expect(g.circuitOf('ep_1')).toEqual({ state: 'closed', consecutiveFailures: 0 });
  });

  it('opens the circuit after the threshold of failures, saying so once, and refuses until the cooldown', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const { guards: g } = guards();
    failThrice(g);
    g.afterAttempt('ep_1', 'retry'); // a straggler: already open
    expect(warn.mock.calls).toEqual([['circuit opened for endpoint ep_1 after 3 failures']]);
    expect(g.circuitOf('ep_1')).toMatchObject({ state: 'open', consecutiveFailures: 4 });
    expect(await g.admit(free)).toEqual({
      reason: 'circuit_open',
      until: new Date(Date.now() + COOLDOWN_MS),
    });
    // Other endpoints are not affected.
    expect(await g.admit({ ...free, id: 'ep_2' })).toBe(true);
  });

  it('lets one probe through after the cooldown, and closes on its success', async () => {
    const { guards: g } = guards();
    failThrice(g);
    jest.advanceTimersByTime(COOLDOWN_MS + 1);
    expect(await g.admit(free)).toBe(true);
    expect(g.circuitOf('ep_1')).toMatchObject({ state: 'half_open', probeStartedAt: Date.now() });
    expect(await g.admit(free)).toMatchObject({ reason: 'circuit_open' });
    g.afterAttempt('ep_1', 'succeeded');
    expect(g.circuitOf('ep_1')).toEqual({ state: 'closed', consecutiveFailures: 0 });
  });

  it('frees a probe whose attempt ended without a verdict (failed for good)', async () => {
    const { guards: g } = guards();
    failThrice(g);
    jest.advanceTimersByTime(COOLDOWN_MS + 1);
    expect(await g.admit(free)).toBe(true);
    g.afterAttempt('ep_1', 'failed');
    expect(g.circuitOf('ep_1')).toMatchObject({ state: 'half_open', probeStartedAt: null });
    expect(await g.admit(free)).toBe(true);
  });

  it('refuses a long rate-limit wait without waiting, and keeps a due probe for the attempt that goes', async () => {
    const { guards: g } = guards();
    const slow = { id: 'ep_1', rateLimitPerSecond: 0.1 };
    expect(await g.admit(slow)).toBe(true); // the bucket's one token
    failThrice(g);
    jest.advanceTimersByTime(COOLDOWN_MS + 1);
    // The probe is due and the next token too (30 s > 10 s): admitted, the probe taken.
    expect(await g.admit(slow)).toBe(true);
    g.afterAttempt('ep_1', 'retry'); // the probe failed: open again
    jest.advanceTimersByTime(COOLDOWN_MS + 1);
    // Probe due, token due: admitted; then no token for 10 s.
    expect(await g.admit(slow)).toBe(true);
    g.afterAttempt('ep_1', 'failed');
    const refused = await g.admit(slow);
    expect(refused).toEqual({ reason: 'rate_limited', until: new Date(Date.now() + 10_000) });
    // The refusal took no probe: the circuit is as the last attempt left it.
    expect(g.circuitOf('ep_1')).toMatchObject({ state: 'half_open', probeStartedAt: null });
  });

  it('waits a short rate-limit wait in line, then admits', async () => {
    const { guards: g } = guards();
    const fast = { id: 'ep_1', rateLimitPerSecond: 2 };
    expect(await g.admit(fast)).toBe(true);
    expect(await g.admit(fast)).toBe(true);
    let admitted: true | object | undefined;
    void g.admit(fast).then((result) => (admitted = result));
    await jest.advanceTimersByTimeAsync(499);
    expect(admitted).toBeUndefined();
    await jest.advanceTimersByTimeAsync(1);
    expect(admitted).toBe(true);
  });

  it('counts rate-limited waits (in line, held) and reports its open circuits at a scrape', async () => {
    const config = loadConfig({});
    Object.assign(config.delivery, { circuit: { failureThreshold: 3, cooldownMs: COOLDOWN_MS } });
    const waits: string[] = [];
    const metrics = { ...NO_METRICS, rateLimitedWait: (outcome: string) => waits.push(outcome) };
    const pool = { run: async () => undefined, runWithinShare: async () => undefined };
    const g = new EndpointGuards(config, pool as unknown as DispatchSlots, metrics);
    const fast = { id: 'ep_fast', rateLimitPerSecond: 2 };
    expect(await g.admit(fast)).toBe(true);
    expect(await g.admit(fast)).toBe(true);
    const inLine = g.admit(fast);
    await jest.advanceTimersByTimeAsync(500);
    expect(await inLine).toBe(true);
    const slow = { id: 'ep_slow', rateLimitPerSecond: 0.1 };
    expect(await g.admit(slow)).toBe(true);
    expect(await g.admit(slow)).toMatchObject({ reason: 'rate_limited' });
    expect(waits).toEqual(['in_line', 'held']);

    failThrice(g, 'ep_a');
    failThrice(g, 'ep_b');
    g.afterAttempt('ep_c', 'retry'); // one failure: closed, still tracked
    const catalog = new HookbaseMetrics({ endpointLabels: false, processMetrics: false });
    await g.collect(catalog);
    const { text } = await catalog.scrape();
    expect(text).toContain('hookbase_circuits{state="open"} 2');
    expect(text).toContain('hookbase_circuits{state="half_open"} 0');
  });

  it('runs a FIFO attempt in a slot of its organization, however long that takes', async () => {
    const { guards: g, asked } = guards();
    expect(await g.withDispatchSlot('org_a', async () => 'done')).toBe('done');
    expect(asked).toEqual(['run:org_a']);
  });

  it('bounds the attempts in flight per endpoint, the rest waiting in arrival order', async () => {
    const { guards: g, asked } = guards({}, 2);
    const started: string[] = [];
    const finish: (() => void)[] = [];
    const task = (name: string) => () =>
      new Promise<void>((resolve) => {
        started.push(name);
        finish.push(resolve);
      });
    const noSlot = jest.fn(async () => undefined);
    const key = { endpointId: 'ep_1', organizationId: 'org_a' };
    const runs = ['a', 'b', 'c'].map((name) => g.withinConcurrency(key, task(name), noSlot));
    // Another endpoint has its own limit.
    const other = g.withinConcurrency({ ...key, endpointId: 'ep_2' }, task('x'), noSlot);
    await jest.advanceTimersByTimeAsync(0);
    expect(started).toEqual(['a', 'b', 'x']);
    finish[0]();
    await jest.advanceTimersByTimeAsync(0);
    expect(started).toEqual(['a', 'b', 'x', 'c']);
    finish.slice(1).forEach((done) => done());
    await Promise.all([...runs, other]);
    expect(noSlot).not.toHaveBeenCalled();
    expect(asked).toEqual(['share:org_a', 'share:org_a', 'share:org_a', 'share:org_a']);
  });

  it('hands a message back when its organization’s share has no room, without running it', async () => {
    const { guards: g } = guards({ runWithinShare: async () => ({ ran: false }) });
    const task = jest.fn(async () => undefined);
    const held: { messageId: string; until: number }[] = [];
    const delivery = { endpointId: 'ep_1', organizationId: 'org_a', messageId: 'msg_1' };
    await g.withinConcurrency(delivery, task, async (d, until) => {
      held.push({ messageId: d.messageId, until: until.getTime() });
    });
    expect(task).not.toHaveBeenCalled();
    expect(held).toEqual([{ messageId: 'msg_1', until: Date.now() + 1_000 }]);
  });

  it("hands back a message that waited a second behind its endpoint's own attempts, until the endpoint can take it, and counts it", async () => {
    const config = loadConfig({});
    Object.assign(config.delivery, { endpointConcurrency: 1, endpointQueueWaitMs: 1_000 });
    const counted: string[] = [];
    const metrics = {
      ...NO_METRICS,
      shareHeld: () => void counted.push('share'),
      backlogHeld: () => void counted.push('backlog'),
    };
    const pool: DispatchSlots = {
      run: async (_organizationId, task) => task(),
      runWithinShare: async <T>(_organizationId: string, task: () => Promise<T>) =>
        ({ ran: true, value: await task() }) as SlotOutcome<T>,
    };
    const g = new EndpointGuards(config, pool, metrics);
    let finishFirst = () => undefined as void;
    const first = g.withinConcurrency(
      { endpointId: 'ep_1', organizationId: 'org_a', messageId: 'msg_1' },
      () => new Promise<void>((resolve) => (finishFirst = resolve)),
      async () => undefined,
    );
    const second = jest.fn(async () => undefined);
    const held: { messageId: string; until: number }[] = [];
    const waiting = g.withinConcurrency(
      { endpointId: 'ep_1', organizationId: 'org_a', messageId: 'msg_2' },
      second,
      async (d, until) => void held.push({ messageId: d.messageId, until: until.getTime() }),
    );
    await jest.advanceTimersByTimeAsync(999);
    expect(held).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    await waiting;
    // The attempt in flight is a second old (nothing finished yet to go by): the endpoint takes
    // a second a message, and one is ahead of it.
    expect(held).toEqual([{ messageId: 'msg_2', until: Date.now() + 2_000 }]);
    expect(second).not.toHaveBeenCalled();
    expect(counted).toEqual(['backlog']);
    finishFirst();
    await first;
  });

  it('keeps waiting a message whose endpoint waits for the dispatch pool, not for its own attempts', async () => {
    const config = loadConfig({});
    Object.assign(config.delivery, { endpointConcurrency: 1, endpointQueueWaitMs: 1_000 });
    const grants: (() => void)[] = [];
    const pool: DispatchSlots = {
      run: async (_organizationId, task) => task(),
      // The pool is busy: a slot comes only when the test grants it.
      runWithinShare: async <T>(_organizationId: string, task: () => Promise<T>) => {
        await new Promise<void>((resolve) => grants.push(resolve));
        return { ran: true, value: await task() } as SlotOutcome<T>;
      },
    };
    const g = new EndpointGuards(config, pool);
    const ran: string[] = [];
    const hold = jest.fn(async () => undefined);
    const send = (messageId: string) =>
      g.withinConcurrency(
        { endpointId: 'ep_1', organizationId: 'org_a', messageId },
        async () => void ran.push(messageId),
        hold,
      );
    const sends = [send('msg_1'), send('msg_2')];
    await jest.advanceTimersByTimeAsync(10_000);
    expect(hold).not.toHaveBeenCalled();
    grants.shift()!();
    await jest.advanceTimersByTimeAsync(0);
    grants.shift()!();
    await Promise.all(sends);
    expect(ran).toEqual(['msg_1', 'msg_2']);
    expect(hold).not.toHaveBeenCalled();
  });

  it('counts each message held for want of a slot, and none that got one', async () => {
    const config = loadConfig({});
    let holds = 0;
    const metrics = { ...NO_METRICS, shareHeld: () => void holds++ };
    let room = false;
    const pool: DispatchSlots = {
      run: async (_organizationId, task) => task(),
      runWithinShare: async <T>(_organizationId: string, task: () => Promise<T>) =>
        (room ? { ran: true, value: await task() } : { ran: false }) as SlotOutcome<T>,
    };
    const g = new EndpointGuards(config, pool, metrics);
    const send = (messageId: string) =>
      g.withinConcurrency(
        { endpointId: 'ep_1', organizationId: 'org_a', messageId },
        async () => undefined,
        async () => undefined,
      );
    await send('msg_1');
    await send('msg_2');
    room = true;
    await send('msg_3');
    expect(holds).toBe(2);
  });
});
