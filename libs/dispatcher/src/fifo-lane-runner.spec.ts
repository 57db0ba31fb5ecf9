import { loadConfig } from '@hookbase/config';
import {
  CircuitState,
  DeliveryDecision,
  DlqReason,
  LANE_LINGER_MS,
  laneRenewEveryMs,
} from '@hookbase/domain';
import {
  EndpointEntity,
  EndpointRepository,
  FifoLaneRepository,
  QueuedMessage,
} from '@hookbase/persistence';
import { Attempts } from './attempt.service';
import { DeadLetters } from './dead-letter.service';
import { DispatchSlots } from './dispatch-pool';
import { EndpointGuards, LaneGuards, Refusal } from './endpoint-guards';
import { PayloadReads } from './event-payloads';
import { FifoLaneRunner } from './fifo-lane-runner';
import { LANES_READ_AHEAD_BYTES, READ_AHEAD_BYTES } from './lane-steps';

const COOLDOWN_MS = 30_000;

const endpointOf = (over: Partial<EndpointEntity> = {}) =>
  ({
    id: 'ep_1',
    organizationId: 'org_a',
    kind: 'http',
    url: 'http://127.0.0.1:1/never',
    config: {},
    status: 'active',
    deletedAt: null,
    retry: { delaysMs: [0, 60_000], maxAgeMs: 3_600_000 },
    rateLimitPerSecond: null,
    fifoEnabled: true,
    ...over,
  }) as unknown as EndpointEntity;

const queuedOf = (messageId: string): QueuedMessage => ({
  messageId,
  eventId: `evt_${messageId}`,
  organizationId: 'org_a',
  endpointId: 'ep_1',
  eventType: 't',
  payload: {},
  acceptedAt: new Date(),
  status: 'fifo_waiting',
  attempts: 0,
  nextAttemptAt: null,
  plan: 'pro',
});

/** A queued message read without its payload, as a head larger than its window's bound is. */
const withoutPayload = (messageId: string): QueuedMessage => ({
  ...queuedOf(messageId),
  payload: undefined,
});

type Outcome = 'succeeded' | 'retry' | 'failed';

/**
 * One FIFO lane with its store, endpoint reads, attempts and DLQ replaced. `guards` is the real
 * EndpointGuards (circuits and buckets in memory, the pool replaced) unless a test gives its own.
 */
function lane(
  options: {
    endpoint?: EndpointEntity;
    queue?: QueuedMessage[];
    outcomes?: Outcome[];
    guards?: (real: EndpointGuards) => LaneGuards;
    /** Every attempt waits for it before answering (a slow receiver), or for the one it names. */
    attemptGate?: Promise<void> | ((messageId: string) => Promise<void> | undefined);
    /** Answers a lease renewal: the lanes the renewal statement found held (default: all). */
    renew?: (endpointIds: string[]) => Promise<Set<string>>;
    /** Runs inside the release statement, once it has found the queue empty. */
    whileReleasing?: () => void;
    /** Messages a read gives at most, as when the window is cut by its payloads' bytes. */
    windowCut?: number;
    /** The events' payloads in the store, by event id (for heads read without theirs). */
    storedPayloads?: Record<string, Record<string, unknown>>;
  } = {},
) {
  let endpoint = options.endpoint ?? endpointOf();
  let queued = options.queue ?? [queuedOf('msg_1')];
  const blocked: (string | null)[] = [];
  const attempted: string[] = [];
  const slotsAsked: string[] = [];
  const deadLettered: { ids: string[]; reason: DlqReason; status: string }[] = [];
  let released = false;
  const handedBack: string[][] = [];
  const calls = { acquire: 0, read: 0, release: 0 };
  /** The payload bytes each window read allowed. */
  const bytesAsked: number[] = [];
  /** The lanes whose lease this runner holds in the store. */
  const owned = new Set<string>();
  const store = {
    acquireMany: async (ids: string[]) => {
      calls.acquire++;
      ids.forEach((id) => owned.add(id));
      return new Set(ids);
    },
    renew: async (_owner: string, ids: string[]) =>
      options.renew ? options.renew(ids) : new Set(ids.filter((id) => owned.has(id))),
    queue: async (_id: string, limit: number) => queued.slice(0, limit),
    queues: async (ids: string[], limit: number, maxBytes: number) => {
      calls.read++;
      bytesAsked.push(maxBytes);
      const count = Math.min(limit, options.windowCut ?? limit);
      const window = { messages: queued.slice(0, count), whole: queued.length < count };
      return new Map(queued.length === 0 ? [] : ids.map((id) => [id, window]));
    },
    releaseManyIfEmpty: async (ids: string[]) => {
      calls.release++;
      const empty = queued.length === 0;
      released = empty;
      if (empty) {
        ids.forEach((id) => owned.delete(id));
        options.whileReleasing?.();
      }
      return empty ? new Set(ids) : new Set<string>();
    },
    releaseAllExcept: async (_owner: string, kept: string[]) => {
      const given = [...owned].filter((id) => !kept.includes(id));
      given.forEach((id) => owned.delete(id));
      handedBack.push(given);
      return given;
    },
    setBlocked: async (_id: string, _owner: string, reason: string | null) =>
      void blocked.push(reason),
    startHeadAttempts: async () => ({ transitioned: [], skipped: [] }),
    unowned: async () => [],
  } as unknown as FifoLaneRepository;
  const endpoints = {
    // The endpoint for ep_1; any other lane's endpoint is the same under its own id.
    forDelivery: async (ids: string[]) => ({
      endpoints: new Map(
        ids.map((id) => [id, id === endpoint.id ? endpoint : { ...endpoint, id }] as const),
      ),
      secrets: new Map([['ep_1', ['whsec_x']]]),
    }),
  } as unknown as EndpointRepository;
  /** The events whose payloads were read, in order. */
  const payloadReads: string[] = [];
  const payloads: PayloadReads = {
    read: async (eventId) => {
      payloadReads.push(eventId);
      return options.storedPayloads?.[eventId];
    },
  };
  /** The payload each attempt sent, by message id. */
  const sent: Record<string, Record<string, unknown>> = {};
  const outcomes = [...(options.outcomes ?? [])];
  const attempts: Attempts = {
    attempt: async (delivery) => {
      attempted.push(delivery.messageId);
      sent[delivery.messageId] = delivery.payload;
      const gate = options.attemptGate;
      await (typeof gate === 'function' ? gate(delivery.messageId) : gate);
      const outcome = outcomes.shift() ?? 'succeeded';
      const decision: DeliveryDecision =
        outcome === 'succeeded'
          ? { status: 'succeeded' }
          : outcome === 'retry'
            ? { status: 'awaiting_retry', nextAttemptAt: new Date(Date.now() + 60_000) }
            : { status: 'failed', dlqReason: 'permanent_failure' };
      if (outcome !== 'retry') queued = queued.filter((q) => q.messageId !== delivery.messageId);
      return { outcome, decision, recorded: Promise.resolve() };
    },
  };
  const deadLetters: DeadLetters = {
    deadLetter: async (deliveries, reason, status) => {
      const ids = deliveries.map((d) => d.messageId);
      deadLettered.push({ ids, reason, status });
      queued = queued.filter((q) => !ids.includes(q.messageId));
    },
  };
  const slots: DispatchSlots = {
    run: async (organizationId, task) => {
      slotsAsked.push(organizationId);
      return task();
    },
    runWithinShare: async () => {
      throw new Error('a FIFO lane waits for its slot as long as it takes');
    },
  };
  const config = loadConfig({});
  Object.assign(config.delivery, { circuit: { failureThreshold: 3, cooldownMs: COOLDOWN_MS } });
  const real = new EndpointGuards(config, slots);
  const guards = options.guards ? options.guards(real) : real;
  const runner = new FifoLaneRunner(
    config,
    store,
    endpoints,
    payloads,
    guards,
    attempts,
    deadLetters,
  );
  return {
    runner,
    real,
    blocked,
    attempted,
    slotsAsked,
    deadLettered,
    released: () => released,
    queued: () => queued,
    payloadReads,
    sent,
    /** The message's event was purged: it left the queue (cancelled) and its payload is gone. */
    purge: (messageId: string) => {
      queued = queued.filter((q) => q.messageId !== messageId);
    },
    /** A message parked in the lane (as the dispatcher's intake does, before its wake). */
    park: (message: QueuedMessage) => {
      queued = [...queued, message];
      released = false;
    },
    calls,
    bytesAsked,
    handedBack,
    owned,
    /** Changes the endpoint in the store: later reads find it so. */
    setEndpoint: (changed: EndpointEntity) => {
      endpoint = changed;
    },
  };
}

/** Lets the lane run until `done` or the deadline (fake time); fails naming what it waited for. */
async function runUntil(done: () => boolean, what: string, withinMs = COOLDOWN_MS) {
  for (let waited = 0; !done(); waited += 100) {
    if (waited > withinMs) throw new Error(`timed out waiting for ${what}`);
    await jest.advanceTimersByTimeAsync(100);
  }
}

describe('FifoLaneRunner', () => {
  beforeEach(() => jest.useFakeTimers({ now: new Date('2026-01-01T00:00:00Z') }));
  afterEach(() => jest.useRealTimers());

  it('delivers the heads in order, one at a time in a slot of their organization, then lets the lane go', async () => {
    const t = lane({ queue: [queuedOf('a'), queuedOf('b'), queuedOf('c')] });
    t.runner.wake(['ep_1']);
    await runUntil(t.released, 'the lane to be released');
    expect(t.attempted).toEqual(['a', 'b', 'c']);
    expect(t.slotsAsked).toEqual(['org_a', 'org_a', 'org_a']);
    await t.runner.onApplicationShutdown();
  });

  it('keeps the lease of a lane fed a message at a time: woken while it lingers, it reads its queue without taking the lease again', async () => {
    const t = lane({ queue: [queuedOf('a')] });
    t.runner.wake(['ep_1']);
    await runUntil(() => t.attempted.length === 1, 'the first attempt');
    await jest.advanceTimersByTimeAsync(LANE_LINGER_MS / 2);
    expect(t.released()).toBe(false);
    t.park(queuedOf('b'));
    t.runner.wake(['ep_1']);
    await runUntil(() => t.attempted.length === 2, 'the second attempt');
    await runUntil(t.released, 'the lane to be released');
    expect(t.attempted).toEqual(['a', 'b']);
    expect(t.calls).toEqual({ acquire: 1, read: 2, release: 1 });
    await t.runner.onApplicationShutdown();
  });

  it('reads its queue again at once when its window was cut by its payloads, without lingering', async () => {
    const t = lane({ queue: [queuedOf('a'), queuedOf('b'), queuedOf('c')], windowCut: 1 });
    t.runner.wake(['ep_1']);
    // Each window holds one message: lingering after each would take LANE_LINGER_MS a message.
    await runUntil(t.released, 'the lane to be released', LANE_LINGER_MS);
    expect(t.attempted).toEqual(['a', 'b', 'c']);
    expect(t.calls).toEqual({ acquire: 1, read: 4, release: 1 });
    await t.runner.onApplicationShutdown();
  });

  it("shares the lanes' read-ahead bytes out evenly once many lanes run, and gives one lane its own bound", async () => {
    const one = lane({ queue: [queuedOf('a')] });
    one.runner.wake(['ep_1']);
    await runUntil(one.released, 'the lane to be released');
    expect(one.bytesAsked[0]).toBe(READ_AHEAD_BYTES);
    await one.runner.onApplicationShutdown();

    // 300 lanes whose heads stay in flight: they all run when they read their windows.
    const many = lane({
      queue: [queuedOf('a'), queuedOf('b')],
      attemptGate: new Promise<void>(() => undefined),
    });
    const ids = Array.from({ length: 300 }, (_, n) => `ep_${n + 1}`);
    many.runner.wake(ids);
    await runUntil(() => many.attempted.length === 300, 'every head in flight');
    expect(new Set(many.bytesAsked)).toEqual(new Set([Math.floor(LANES_READ_AHEAD_BYTES / 300)]));
    expect(300 * many.bytesAsked[0]).toBeLessThanOrEqual(LANES_READ_AHEAD_BYTES);
    const drained = many.runner.drain(Date.now() + 1_000);
    await jest.advanceTimersByTimeAsync(1_100);
    await drained;
  });

  it('sends a head that came without its payload with the one read in its slot, and passes over one whose payload is gone', async () => {
    let letGo = () => undefined as void;
    const gate = new Promise<void>((resolve) => (letGo = resolve));
    const stored: Record<string, Record<string, unknown>> = {
      evt_a: { n: 'a' },
      evt_c: { n: 'c' },
    };
    const t = lane({
      queue: [withoutPayload('a'), queuedOf('b'), withoutPayload('c'), queuedOf('d')],
      storedPayloads: stored,
      attemptGate: (messageId) => (messageId === 'a' ? gate : undefined),
    });
    t.runner.wake(['ep_1']);
    await runUntil(() => t.attempted.length === 1, 'the first attempt');
    // c's event is purged while a is sent: c is ended, and its payload is no longer stored.
    t.purge('c');
    delete stored.evt_c;
    letGo();
    await runUntil(t.released, 'the lane to be released');
    expect(t.attempted).toEqual(['a', 'b', 'd']);
    expect(t.sent).toEqual({ a: { n: 'a' }, b: {}, d: {} });
    // Only the heads that came without theirs read their payloads, each in its slot.
    expect(t.payloadReads).toEqual(['evt_a', 'evt_c']);
    await t.runner.onApplicationShutdown();
  });

  it('starts a lane again that was woken while it gave its lease up', async () => {
    let parkOnce: (() => void) | undefined;
    const t = lane({ queue: [queuedOf('a')], whileReleasing: () => parkOnce?.() });
    parkOnce = () => {
      parkOnce = undefined;
      // Queued, and the lane woken, after the release statement found the queue empty but before
      // its answer came back.
      t.park(queuedOf('b'));
      t.runner.wake(['ep_1']);
    };
    t.runner.wake(['ep_1']);
    await runUntil(() => t.attempted.length === 2, 'the message queued during the release');
    expect(t.attempted).toEqual(['a', 'b']);
    expect(t.calls.acquire).toBe(2);
    await runUntil(t.released, 'the lane to be released');
    await t.runner.onApplicationShutdown();
  });

  it('keeps a head that is to be retried at the front: the next waits for it', async () => {
    const t = lane({ queue: [queuedOf('a'), queuedOf('b')], outcomes: ['retry'] });
    t.runner.wake(['ep_1']);
    await runUntil(() => t.attempted.length === 1, 'the first attempt');
    await jest.advanceTimersByTimeAsync(5_000);
    expect(t.attempted).toEqual(['a']);
    await runUntil(t.released, 'the lane to be released', 120_000);
    expect(t.attempted).toEqual(['a', 'a', 'b']);
    await t.runner.onApplicationShutdown();
  });

  it('dead-letters the whole queue of a deleted endpoint, without an attempt', async () => {
    const t = lane({
      endpoint: endpointOf({ deletedAt: new Date() }),
      queue: [queuedOf('a'), queuedOf('b')],
    });
    t.runner.wake(['ep_1']);
    await runUntil(t.released, 'the lane to be released');
    expect(t.deadLettered).toEqual([
      { ids: ['a', 'b'], reason: 'endpoint_deleted', status: 'cancelled' },
    ]);
    expect(t.attempted).toEqual([]);
    await t.runner.onApplicationShutdown();
  });

  it('says the lane waits for the circuit when admission refuses for it, and clears that once admitted', async () => {
    let refusals = 1;
    const t = lane({
      guards: (real) => ({
        circuitPolicy: real.circuitPolicy,
        circuitOf: (id) => real.circuitOf(id),
        withDispatchSlot: (organizationId, task) => real.withDispatchSlot(organizationId, task),
        afterAttempt: (id, outcome) => real.afterAttempt(id, outcome),
        admit: async (): Promise<true | Refusal> =>
          refusals-- > 0 ? { reason: 'circuit_open', until: new Date(Date.now() + 2_000) } : true,
      }),
    });
    t.runner.wake(['ep_1']);
    await jest.advanceTimersByTimeAsync(100);
    expect(t.blocked).toEqual(['circuit_open']);
    expect(t.attempted).toEqual([]);
    await runUntil(t.released, 'the lane to be released');
    expect(t.blocked).toEqual(['circuit_open', null]);
    expect(t.attempted).toEqual(['msg_1']);
    await t.runner.onApplicationShutdown();
  });

  it('reads the endpoint again when the dispatch slot came late, and sends nothing to an endpoint paused meanwhile', async () => {
    let pausedWhileWaiting = false;
    const t = lane({
      guards: (real) => ({
        circuitPolicy: real.circuitPolicy,
        circuitOf: (id) => real.circuitOf(id),
        afterAttempt: (id, outcome) => real.afterAttempt(id, outcome),
        admit: (endpoint) => real.admit(endpoint),
        // The pool is busy: each slot comes 300 ms later. The first time, the endpoint is paused
        // meanwhile.
        withDispatchSlot: async (organizationId, task) => {
          if (!pausedWhileWaiting) {
            pausedWhileWaiting = true;
            t.setEndpoint(endpointOf({ status: 'paused' }));
          }
          await new Promise((resolve) => setTimeout(resolve, 300));
          return real.withDispatchSlot(organizationId, task);
        },
      }),
    });
    t.runner.wake(['ep_1']);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(t.attempted).toEqual([]);
    // Resumed: the head goes at the lane's next look.
    t.setEndpoint(endpointOf());
    await runUntil(t.released, 'the lane to be released', 120_000);
    expect(t.attempted).toEqual(['msg_1']);
    await t.runner.onApplicationShutdown();
  });

  it('waits for an open circuit without an attempt, then sends the probe', async () => {
    const t = lane();
    for (let i = 0; i < 3; i++) t.real.afterAttempt('ep_1', 'retry');
    t.runner.wake(['ep_1']);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(t.attempted).toEqual([]);
    expect(t.blocked).toContain('circuit_open');
    await runUntil(t.released, 'the lane to be released', 2 * COOLDOWN_MS);
    expect(t.attempted).toEqual(['msg_1']);
    expect(t.real.circuitOf('ep_1')).toEqual({ state: 'closed', consecutiveFailures: 0 });
    await t.runner.onApplicationShutdown();
  });

  describe('at a rate-limited endpoint whose circuit is due a probe', () => {
    it('keeps the probe until the attempt goes, and never says circuit_open while rate-limited', async () => {
      // One token every 10 s: the lane holds its head instead of waiting in line.
      const t = lane({ endpoint: endpointOf({ rateLimitPerSecond: 0.1 }) });
      const circuit = (): CircuitState => t.real.circuitOf('ep_1');
      // The endpoint's one token is taken: the next comes in 10 s.
      expect(await t.real.admit(endpointOf({ rateLimitPerSecond: 0.1 }))).toBe(true);
      // Three failures longer than the cooldown ago: a probe is due now.
      const now = Date.now();
      jest.setSystemTime(now - COOLDOWN_MS - 1);
      for (let i = 0; i < 3; i++) t.real.afterAttempt('ep_1', 'retry');
      jest.setSystemTime(now);

      t.runner.wake(['ep_1']);
      await jest.advanceTimersByTimeAsync(100);
      // Rate-limited: no attempt yet, and the circuit's probe is not taken by a lane that waits.
      expect(t.attempted).toHaveLength(0);
      expect(circuit().state).toBe('open');

      // The next token comes after 10 s, well within the cooldown: the probe goes then.
      await runUntil(() => t.attempted.length === 1, 'the probe', COOLDOWN_MS - 1_000);
      expect(t.blocked).not.toContain('circuit_open');
      await t.runner.onApplicationShutdown();
    });
  });

  describe('while the lane waits for a dispatch slot', () => {
    /** A lane whose slot comes only when `free()` is called; `waiting()` once it asked. */
    function laneBehindBusyPool(endpoint: EndpointEntity) {
      let free!: () => void;
      const slot = new Promise<void>((resolve) => (free = resolve));
      let asked = false;
      const t = lane({
        endpoint,
        guards: (real) => ({
          circuitPolicy: real.circuitPolicy,
          circuitOf: (id) => real.circuitOf(id),
          afterAttempt: (id, outcome) => real.afterAttempt(id, outcome),
          admit: (e) => real.admit(e),
          withDispatchSlot: async (organizationId, task) => {
            asked = true;
            await slot;
            return real.withDispatchSlot(organizationId, task);
          },
        }),
      });
      return { t, free: () => free(), waiting: () => asked };
    }

    it("holds no rate-limit token: the endpoint's other messages may use it", async () => {
      const limited = endpointOf({ rateLimitPerSecond: 0.1 });
      const { t, free, waiting } = laneBehindBusyPool(limited);
      t.runner.wake(['ep_1']);
      await runUntil(waiting, 'the lane waiting for its slot');
      // The one token of the next 10 s is still there for another message of the endpoint.
      expect(await t.real.admit(limited)).toBe(true);
      free();
      await jest.advanceTimersByTimeAsync(1_000);
      // The lane is admitted after its slot came: the token went to the other message.
      expect(t.attempted).toEqual([]);
      await runUntil(() => t.attempted.length === 1, 'the head sent with the next token', 20_000);
      await t.runner.onApplicationShutdown();
    });

    it("holds no circuit probe: the endpoint's other messages may take it", async () => {
      const { t, free, waiting } = laneBehindBusyPool(endpointOf());
      // Three failures longer than the cooldown ago: a probe is due now.
      const now = Date.now();
      jest.setSystemTime(now - COOLDOWN_MS - 1);
      for (let i = 0; i < 3; i++) t.real.afterAttempt('ep_1', 'retry');
      jest.setSystemTime(now);
      t.runner.wake(['ep_1']);
      await runUntil(waiting, 'the lane waiting for its slot');
      expect(await t.real.admit(endpointOf())).toBe(true);
      // That probe succeeded: the circuit closes, and the lane's head goes once its slot comes.
      t.real.afterAttempt('ep_1', 'succeeded');
      free();
      await runUntil(() => t.attempted.length === 1, 'the head sent');
      expect(t.blocked).not.toContain('circuit_open');
      await t.runner.onApplicationShutdown();
    });
  });

  it('on a stop finishes the head it is sending, starts no other, and hands the lane back at once', async () => {
    let answer!: () => void;
    const gate = new Promise<void>((resolve) => (answer = resolve));
    const t = lane({ queue: [queuedOf('a'), queuedOf('b'), queuedOf('c')], attemptGate: gate });
    t.runner.wake(['ep_1']);
    await runUntil(() => t.attempted.length === 1, 'the first head in flight');
    const drained = t.runner.drain(Date.now() + 10_000);
    t.runner.wake(['ep_2']);
    await jest.advanceTimersByTimeAsync(500);
    expect(t.handedBack).toEqual([]);
    answer();
    await jest.advanceTimersByTimeAsync(100);
    await drained;
    expect(t.attempted).toEqual(['a']);
    expect(t.queued().map((q) => q.messageId)).toEqual(['b', 'c']);
    expect(t.handedBack).toEqual([['ep_1']]);
  });

  it('keeps the lease of a lane whose head is still being sent at the drain deadline', async () => {
    const t = lane({ attemptGate: new Promise<void>(() => undefined) });
    t.runner.wake(['ep_1']);
    await runUntil(() => t.attempted.length === 1, 'the head in flight');
    const drained = t.runner.drain(Date.now() + 2_000);
    await jest.advanceTimersByTimeAsync(2_100);
    await drained;
    // Handed back, the head could be sent by another dispatcher while it is still in flight here.
    expect(t.handedBack).toEqual([[]]);
  });

  it('stops a lane whose lease another owner took (this process stalled) once its head is sent, and hands nothing back', async () => {
    let sent!: () => void;
    const gate = new Promise<void>((resolve) => (sent = resolve));
    const owned: { set?: Set<string> } = {};
    const t = lane({
      queue: [queuedOf('a'), queuedOf('b')],
      attemptGate: (id) => (id === 'a' ? gate : undefined),
      // Another dispatcher took the lane once the lease had run out.
      renew: async () => {
        owned.set?.delete('ep_1');
        return new Set<string>();
      },
    });
    owned.set = t.owned;
    t.runner.onApplicationBootstrap();
    t.runner.wake(['ep_1']);
    await runUntil(() => t.attempted.length === 1, 'the head in flight');
    await jest.advanceTimersByTimeAsync(laneRenewEveryMs(loadConfig({}).fifo.leaseMs));
    sent();
    await jest.advanceTimersByTimeAsync(LANE_LINGER_MS * 4);
    // Its new owner sends `b`; this process neither sends it nor gives away a lease it lost.
    expect(t.attempted).toEqual(['a']);
    await t.runner.drain(Date.now() + 1_000);
    expect(t.handedBack).toEqual([[]]);
  });

  it('stops a lane whose lease could not be renewed for most of its length, before another worker may take it', async () => {
    let sent!: () => void;
    const gate = new Promise<void>((resolve) => (sent = resolve));
    const leaseMs = loadConfig({}).fifo.leaseMs;
    const t = lane({
      queue: [queuedOf('a'), queuedOf('b')],
      attemptGate: (id) => (id === 'a' ? gate : undefined),
      // The database is unreachable for the renewals.
      renew: async () => {
        throw new Error('connection refused');
      },
    });
    t.runner.onApplicationBootstrap();
    t.runner.wake(['ep_1']);
    await runUntil(() => t.attempted.length === 1, 'the head in flight');
    await jest.advanceTimersByTimeAsync(leaseMs - 2 * laneRenewEveryMs(leaseMs));
    sent();
    await jest.advanceTimersByTimeAsync(LANE_LINGER_MS * 4);
    // The lease may end while `b` would be sent: this process sends nothing more.
    expect(t.attempted).toEqual(['a']);
    await t.runner.drain(Date.now() + 1_000);
  });

  it('keeps running a lane that gave its lease up and took it again while a renewal was under way', async () => {
    const gates = new Map<string, () => void>();
    const gated = (id: string) => new Promise<void>((resolve) => gates.set(id, resolve));
    let renewalAnswered!: (held: Set<string>) => void;
    let renewals = 0;
    const t = lane({
      queue: [queuedOf('a')],
      attemptGate: (id) => (id === 'a' || id === 'b' ? gated(id) : undefined),
      renew: () => {
        renewals++;
        return new Promise((resolve) => (renewalAnswered = resolve));
      },
    });
    t.runner.onApplicationBootstrap();
    t.runner.wake(['ep_1']);
    await runUntil(() => t.attempted.length === 1, 'the first head in flight');
    // A renewal starts while the lane holds its lease, and its statement takes a while.
    await runUntil(
      () => renewals === 1,
      'a renewal',
      laneRenewEveryMs(loadConfig({}).fifo.leaseMs),
    );
    gates.get('a')!();
    await runUntil(t.released, 'the lane to give its lease up');
    // Messages come; the lane starts again and takes its lease again.
    t.park(queuedOf('b'));
    t.park(queuedOf('c'));
    t.runner.wake(['ep_1']);
    await runUntil(() => t.attempted.length === 2, 'the next head in flight');
    // The statement ran between the release and the new lease: it found the lane not held.
    renewalAnswered(new Set());
    await jest.advanceTimersByTimeAsync(0);
    gates.get('b')!();
    await runUntil(t.released, 'the lane to deliver its queue and give its lease up again');
    expect(t.attempted).toEqual(['a', 'b', 'c']);
    expect(t.owned.size).toBe(0);
    await t.runner.drain(Date.now() + 1_000);
  });
});
