import { CircuitPolicy, CircuitState, CLOSED } from './circuit-breaker';
import {
  describeLane,
  emptyWindowStep,
  EmptyWindowStep,
  isLeaseStale,
  LaneEndpoint,
  LaneHead,
  LaneLease,
  laneLeaseLapsing,
  laneRenewEveryMs,
  laneWindowBytes,
  nextLaneStep,
} from './fifo-lane';
import type { EndpointStatus, MessageStatus } from './model';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const at = (offsetMs: number) => new Date(NOW + offsetMs);
const now = at(0);

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const recheckMs = 10_000;
const policy: CircuitPolicy = { failureThreshold: 3, cooldownMs: 30_000 };
const retentionCutoff = at(-7 * DAY);

const endpoint = (over: Partial<LaneEndpoint> = {}): LaneEndpoint => ({
  status: 'active',
  fifoEnabled: true,
  deleted: false,
  maxAgeMs: DAY,
  ...over,
});

/** A head accepted a minute ago, waiting its turn. */
const head = (over: Partial<LaneHead> = {}): LaneHead => ({
  status: 'fifo_waiting',
  nextAttemptAt: null,
  acceptedAt: at(-MINUTE),
  ...over,
});

const closed = (consecutiveFailures: number): CircuitState => ({
  state: 'closed',
  consecutiveFailures,
});
const open = (openedAt: number, consecutiveFailures = 3): CircuitState => ({
  state: 'open',
  openedAt,
  consecutiveFailures,
});
const halfOpen = (probeStartedAt: number | null, consecutiveFailures = 3): CircuitState => ({
  state: 'half_open',
  probeStartedAt,
  consecutiveFailures,
});

type StepInput = Parameters<typeof nextLaneStep>[0];
const step = (over: Partial<StepInput> = {}) =>
  nextLaneStep({
    endpoint: endpoint(),
    head: head(),
    now,
    retentionCutoff,
    recheckMs,
    circuit: CLOSED,
    circuitPolicy: policy,
    ...over,
  });

/** Conditions that would each hold the head on their own; used to check what beats them. */
const pastRetention = { head: head({ acceptedAt: at(-8 * DAY) }) };
const retrying = { head: head({ status: 'awaiting_retry', nextAttemptAt: at(5_000) }) };
const circuitOpen = { circuit: open(NOW - 1_000) };
const disabled = { endpoint: endpoint({ status: 'disabled' }) };
const paused = { endpoint: endpoint({ status: 'paused' }) };
const pausedPastMaxAge = {
  endpoint: endpoint({ status: 'paused', maxAgeMs: HOUR }),
  head: head({ acceptedAt: at(-2 * HOUR) }),
};

describe('nextLaneStep', () => {
  describe('a deleted or missing endpoint', () => {
    it.each<[string, Partial<StepInput>]>([
      ['no longer exists', { endpoint: null }],
      ['is marked deleted', { endpoint: endpoint({ deleted: true }) }],
      ['is deleted with FIFO off', { endpoint: endpoint({ deleted: true, fifoEnabled: false }) }],
      ['is deleted while disabled', { endpoint: endpoint({ deleted: true, status: 'disabled' }) }],
      ['is deleted while paused', { endpoint: endpoint({ deleted: true, status: 'paused' }) }],
      [
        'is deleted while paused past max age',
        {
          ...pausedPastMaxAge,
          endpoint: endpoint({ deleted: true, status: 'paused', maxAgeMs: HOUR }),
        },
      ],
      [
        'is deleted, head past retention',
        { ...pastRetention, endpoint: endpoint({ deleted: true }) },
      ],
      ['is missing, head past retention', { ...pastRetention, endpoint: null }],
      ['is deleted, head retrying', { ...retrying, endpoint: endpoint({ deleted: true }) }],
      ['is deleted, circuit open', { ...circuitOpen, endpoint: endpoint({ deleted: true }) }],
      [
        'is deleted, probe out',
        { circuit: halfOpen(NOW - 100), endpoint: endpoint({ deleted: true }) },
      ],
    ])('dead-letters the whole queue when the endpoint %s', (_label, over) => {
      expect(step(over)).toEqual({ action: 'dead-letter-all', reason: 'endpoint_deleted' });
    });
  });

  describe('FIFO turned off', () => {
    const off = endpoint({ fifoEnabled: false });
    it.each<[string, Partial<StepInput>]>([
      ['an active endpoint', { endpoint: off }],
      ['a head past retention', { ...pastRetention, endpoint: off }],
      ['a disabled endpoint', { endpoint: endpoint({ fifoEnabled: false, status: 'disabled' }) }],
      ['a paused endpoint', { endpoint: endpoint({ fifoEnabled: false, status: 'paused' }) }],
      [
        'a paused endpoint past max age',
        {
          ...pausedPastMaxAge,
          endpoint: endpoint({ fifoEnabled: false, status: 'paused', maxAgeMs: HOUR }),
        },
      ],
      ['a head retrying', { ...retrying, endpoint: off }],
      ['an open circuit', { ...circuitOpen, endpoint: off }],
    ])('hands the queue back to normal delivery, with %s', (_label, over) => {
      expect(step(over)).toEqual({ action: 'hand-back' });
    });
  });

  describe('retention', () => {
    it.each<[string, Partial<StepInput>]>([
      ['active', {}],
      ['disabled', disabled],
      ['paused (within max age)', paused],
      ['paused past max age too', pausedPastMaxAge],
      ['retrying', retrying],
      ['with an open circuit', circuitOpen],
      ['with a probe out', { circuit: halfOpen(NOW - 100) }],
    ])('expires a head past retention as fifo_expired when the lane is %s', (_label, over) => {
      const oldHead = { ...(over.head ?? head()), acceptedAt: at(-8 * DAY) };
      expect(step({ ...over, head: oldHead })).toEqual({
        action: 'expire-head',
        reason: 'fifo_expired',
      });
    });

    it('expires a retrying head past retention, whatever its next attempt', () => {
      expect(
        step({
          head: head({
            status: 'awaiting_retry',
            nextAttemptAt: at(HOUR),
            acceptedAt: at(-8 * DAY),
          }),
        }),
      ).toEqual({ action: 'expire-head', reason: 'fifo_expired' });
    });

    it('keeps a head accepted exactly at the cutoff, and expires one a millisecond older', () => {
      expect(step({ head: head({ acceptedAt: retentionCutoff }) })).toEqual({
        action: 'deliver',
        circuit: CLOSED,
      });
      expect(step({ head: head({ acceptedAt: new Date(retentionCutoff.getTime() - 1) }) })).toEqual(
        { action: 'expire-head', reason: 'fifo_expired' },
      );
    });
  });

  describe('disabled endpoint', () => {
    it('holds the queue, looking again after recheckMs', () => {
      expect(step(disabled)).toEqual({ action: 'wait', until: at(recheckMs), reason: 'disabled' });
      expect(step({ ...disabled, recheckMs: 60_000 })).toEqual({
        action: 'wait',
        until: at(60_000),
        reason: 'disabled',
      });
    });

    it('holds a head older than max age (only a paused endpoint expires by age)', () => {
      expect(
        step({
          endpoint: endpoint({ status: 'disabled', maxAgeMs: HOUR }),
          head: head({ acceptedAt: at(-2 * HOUR) }),
        }),
      ).toEqual({ action: 'wait', until: at(recheckMs), reason: 'disabled' });
    });

    it.each<[string, Partial<StepInput>]>([
      ['a retrying head', retrying],
      ['an open circuit', circuitOpen],
      ['a probe due (the probe is not used)', { circuit: open(NOW - 60_000) }],
    ])('beats %s', (_label, over) => {
      expect(step({ ...over, ...disabled })).toEqual({
        action: 'wait',
        until: at(recheckMs),
        reason: 'disabled',
      });
    });
  });

  describe('paused endpoint', () => {
    it('holds the queue, looking again after recheckMs', () => {
      expect(step(paused)).toEqual({ action: 'wait', until: at(recheckMs), reason: 'paused' });
      expect(step({ ...paused, recheckMs: 1_234 })).toEqual({
        action: 'wait',
        until: at(1_234),
        reason: 'paused',
      });
    });

    it.each<[string, number, object]>([
      ['well within max age', HOUR / 2, { action: 'wait', until: at(recheckMs), reason: 'paused' }],
      [
        'a millisecond short of max age',
        HOUR - 1,
        { action: 'wait', until: at(recheckMs), reason: 'paused' },
      ],
      ['exactly max age', HOUR, { action: 'wait', until: at(recheckMs), reason: 'paused' }],
      ['a millisecond past max age', HOUR + 1, { action: 'expire-head', reason: 'max_age' }],
      ['long past max age', 5 * HOUR, { action: 'expire-head', reason: 'max_age' }],
    ])('with a head aged %s', (_label, ageMs, expected) => {
      expect(
        step({
          endpoint: endpoint({ status: 'paused', maxAgeMs: HOUR }),
          head: head({ acceptedAt: at(-ageMs) }),
        }),
      ).toEqual(expected);
    });

    it.each<[string, Partial<StepInput>]>([
      ['a retrying head', retrying],
      ['an open circuit', circuitOpen],
      ['a probe due (the probe is not used)', { circuit: open(NOW - 60_000) }],
    ])('beats %s', (_label, over) => {
      expect(step({ ...over, ...paused })).toEqual({
        action: 'wait',
        until: at(recheckMs),
        reason: 'paused',
      });
    });

    it('expires a head past max age even while it waits for a retry or the circuit', () => {
      const oldRetryingHead = head({
        status: 'awaiting_retry',
        nextAttemptAt: at(5_000),
        acceptedAt: at(-2 * HOUR),
      });
      expect(step({ ...pausedPastMaxAge, head: oldRetryingHead })).toEqual({
        action: 'expire-head',
        reason: 'max_age',
      });
      expect(step({ ...pausedPastMaxAge, ...circuitOpen })).toEqual({
        action: 'expire-head',
        reason: 'max_age',
      });
    });
  });

  describe('head awaiting a retry', () => {
    const retryAt = (nextAttemptAt: Date | null, status: MessageStatus = 'awaiting_retry') =>
      head({ status, nextAttemptAt });

    it.each<[string, number, number]>([
      ['due in 1 ms', 1, 1],
      ['due in 5 s', 5_000, 5_000],
      ['due exactly at the recheck', recheckMs, recheckMs],
      ['due just after the recheck', recheckMs + 1, recheckMs],
      ['due in an hour', HOUR, recheckMs],
    ])('waits when %s, until min(nextAttemptAt, now + recheckMs)', (_label, dueIn, waitFor) => {
      expect(step({ head: retryAt(at(dueIn)) })).toEqual({
        action: 'wait',
        until: at(waitFor),
        reason: 'retrying',
      });
    });

    it.each<[string, Date | null]>([
      ['due now', now],
      ['due a millisecond ago', at(-1)],
      ['overdue by an hour', at(-HOUR)],
      ['without a next attempt time', null],
    ])('is delivered when %s', (_label, nextAttemptAt) => {
      expect(step({ head: retryAt(nextAttemptAt) })).toEqual({
        action: 'deliver',
        circuit: CLOSED,
      });
    });

    it.each<MessageStatus>(['fifo_waiting', 'in_flight', 'pending'])(
      'only holds an awaiting_retry head: a %s head with a future time is delivered',
      (status) => {
        expect(step({ head: retryAt(at(5_000), status) })).toEqual({
          action: 'deliver',
          circuit: CLOSED,
        });
      },
    );

    it('beats an open circuit, and leaves the circuit alone', () => {
      expect(step({ ...retrying, circuit: open(NOW - 1_000) })).toEqual({
        action: 'wait',
        until: at(5_000),
        reason: 'retrying',
      });
      // A probe would be due, but the head is not: no probe is started.
      expect(step({ ...retrying, circuit: open(NOW - 60_000) })).toEqual({
        action: 'wait',
        until: at(5_000),
        reason: 'retrying',
      });
    });

    it('meets the circuit once it is due', () => {
      expect(step({ head: retryAt(at(-1)), circuit: open(NOW - 1_000), recheckMs: HOUR })).toEqual({
        action: 'wait',
        until: at(-1_000 + policy.cooldownMs),
        reason: 'circuit_open',
      });
    });
  });

  describe('circuit breaker', () => {
    it.each<[string, CircuitState]>([
      ['no failures', CLOSED],
      ['some failures below the threshold', closed(2)],
    ])('delivers with a closed circuit (%s), its state unchanged', (_label, circuit) => {
      const result = step({ circuit });
      expect(result).toEqual({ action: 'deliver', circuit });
    });

    it.each<[string, number, number]>([
      ['just opened', 0, policy.cooldownMs],
      ['opened 25 s ago', -25_000, 5_000],
      ['opened 1 ms short of the cooldown', -(policy.cooldownMs - 1), 1],
    ])('waits without an attempt while the circuit is %s', (_label, openedAgo, waitFor) => {
      // recheck longer than the cooldown: the wait ends when the cooldown does.
      expect(step({ circuit: open(NOW + openedAgo), recheckMs: HOUR })).toEqual({
        action: 'wait',
        until: at(waitFor),
        reason: 'circuit_open',
      });
    });

    it('caps the circuit wait at recheckMs', () => {
      expect(step({ circuit: open(NOW) })).toEqual({
        action: 'wait',
        until: at(recheckMs),
        reason: 'circuit_open',
      });
      expect(step({ circuit: open(NOW - 25_000), recheckMs: 2_000 })).toEqual({
        action: 'wait',
        until: at(2_000),
        reason: 'circuit_open',
      });
    });

    it('lets a probe through once the cooldown has passed (exactly, or long ago)', () => {
      for (const openedAt of [NOW - policy.cooldownMs, NOW - HOUR]) {
        expect(step({ circuit: open(openedAt, 7) })).toEqual({
          action: 'deliver',
          circuit: halfOpen(NOW, 7),
        });
      }
    });

    it('lets exactly one probe through a half-open circuit', () => {
      const first = step({ circuit: halfOpen(null, 4) });
      expect(first).toEqual({ action: 'deliver', circuit: halfOpen(NOW, 4) });
      if (first.action !== 'deliver') throw new Error('unreachable');

      // The lane keeps the returned state: the next head waits while the probe is out.
      expect(step({ circuit: first.circuit })).toEqual({
        action: 'wait',
        until: at(1_000),
        reason: 'circuit_open',
      });
      expect(step({ circuit: first.circuit, now: at(500) })).toEqual({
        action: 'wait',
        until: at(1_500),
        reason: 'circuit_open',
      });
    });

    it('caps the wait for a probe at recheckMs', () => {
      expect(step({ circuit: halfOpen(NOW - 100), recheckMs: 300 })).toEqual({
        action: 'wait',
        until: at(300),
        reason: 'circuit_open',
      });
    });

    it('sends another probe once the one out is lost (older than the cooldown)', () => {
      expect(step({ circuit: halfOpen(NOW - policy.cooldownMs) })).toEqual({
        action: 'wait',
        until: at(1_000),
        reason: 'circuit_open',
      });
      expect(step({ circuit: halfOpen(NOW - policy.cooldownMs - 1, 5) })).toEqual({
        action: 'deliver',
        circuit: halfOpen(NOW, 5),
      });
    });

    it('does not change the circuit state it was given', () => {
      const circuit = open(NOW - HOUR);
      const copy = { ...circuit };
      step({ circuit });
      expect(circuit).toEqual(copy);
    });
  });

  it('changes none of its inputs', () => {
    const input: StepInput = {
      endpoint: endpoint({ status: 'paused', maxAgeMs: HOUR }),
      head: head({ acceptedAt: at(-2 * HOUR) }),
      now,
      retentionCutoff,
      recheckMs,
      circuit: halfOpen(null),
      circuitPolicy: policy,
    };
    const snapshot = JSON.stringify(input);
    nextLaneStep(input);
    nextLaneStep({ ...input, endpoint: endpoint() });
    expect(JSON.stringify(input)).toBe(snapshot);
  });
});

describe('laneLeaseLapsing', () => {
  it('lets a lane run until two renewal intervals before its lease ends', () => {
    // 5 minutes, renewed every 5 s: the lane stops 10 s before the end.
    expect(laneLeaseLapsing(NOW, NOW + 289_999, 300_000)).toBe(false);
    expect(laneLeaseLapsing(NOW, NOW + 290_000, 300_000)).toBe(true);
    expect(laneLeaseLapsing(NOW, NOW + 400_000, 300_000)).toBe(true);
  });

  it('scales with a short lease', () => {
    // 1 s, renewed every 200 ms: 600 ms.
    expect(laneLeaseLapsing(NOW, NOW + 599, 1_000)).toBe(false);
    expect(laneLeaseLapsing(NOW, NOW + 600, 1_000)).toBe(true);
  });

  it('is not lapsing for a lease just confirmed', () => {
    expect(laneLeaseLapsing(NOW, NOW, 300_000)).toBe(false);
  });
});

describe('laneRenewEveryMs', () => {
  it.each<[number, number]>([
    [0, 100],
    [1, 100],
    [400, 100],
    [500, 100],
    [504, 100],
    [505, 101],
    [1_000, 200],
    [10_000, 2_000],
    [24_999, 4_999],
    [25_000, 5_000],
    [25_004, 5_000],
    [300_000, 5_000],
    [3_600_000, 5_000],
  ])('renews a %i ms lease every %i ms', (leaseMs, expected) => {
    expect(laneRenewEveryMs(leaseMs)).toBe(expected);
  });

  it('renews at least five times per lease between the clamps', () => {
    for (const leaseMs of [500, 777, 1_000, 12_345, 25_000]) {
      expect(laneRenewEveryMs(leaseMs) * 5).toBeLessThanOrEqual(leaseMs);
      expect(Number.isInteger(laneRenewEveryMs(leaseMs))).toBe(true);
    }
  });
});

const LEASE_MS = 300_000; // renewals every 5 s: stale after 10 s without one

const lease = (over: Partial<LaneLease> = {}): LaneLease => ({
  owner: 'dispatcher-1',
  leaseUntil: at(LEASE_MS),
  renewedAt: now,
  blockedReason: null,
  blockedUntil: null,
  ...over,
});

describe('isLeaseStale', () => {
  it('is false without a lease, an owner, an end or a renewal time', () => {
    const old = at(-HOUR);
    expect(isLeaseStale(null, LEASE_MS, now)).toBe(false);
    expect(isLeaseStale(lease({ owner: null, renewedAt: old }), LEASE_MS, now)).toBe(false);
    expect(isLeaseStale(lease({ leaseUntil: null, renewedAt: old }), LEASE_MS, now)).toBe(false);
    expect(isLeaseStale(lease({ renewedAt: null }), LEASE_MS, now)).toBe(false);
  });

  it('is false once the lease has run out, however old the renewal', () => {
    expect(isLeaseStale(lease({ leaseUntil: now, renewedAt: at(-HOUR) }), LEASE_MS, now)).toBe(
      false,
    );
    expect(isLeaseStale(lease({ leaseUntil: at(-1), renewedAt: at(-HOUR) }), LEASE_MS, now)).toBe(
      false,
    );
    expect(isLeaseStale(lease({ leaseUntil: at(1), renewedAt: at(-HOUR) }), LEASE_MS, now)).toBe(
      true,
    );
  });

  it.each<[number, number, boolean]>([
    // leaseMs, renewed this long ago, stale?
    [LEASE_MS, 0, false],
    [LEASE_MS, 5_000, false],
    [LEASE_MS, 10_000, false],
    [LEASE_MS, 10_001, true],
    [LEASE_MS, 200_000, true],
    [1_000, 400, false], // renew every 200 ms
    [1_000, 401, true],
    [100, 200, false], // renew every 100 ms (clamped)
    [100, 201, true],
    [60_000, 10_000, false], // renew every 5 s (clamped, not 12 s): stale after 10 s
    [60_000, 10_001, true],
    [60_000, 24_000, true],
  ])('with a %i ms lease renewed %i ms ago: %s', (leaseMs, renewedAgo, expected) => {
    const running = lease({ leaseUntil: at(leaseMs), renewedAt: at(-renewedAgo) });
    expect(isLeaseStale(running, leaseMs, now)).toBe(expected);
  });

  it('is false for a renewal stamped slightly in the future (clock skew)', () => {
    expect(isLeaseStale(lease({ renewedAt: at(2_000) }), LEASE_MS, now)).toBe(false);
  });
});

describe('describeLane', () => {
  type DescribeInput = Parameters<typeof describeLane>[0];
  const describeIt = (over: Partial<DescribeInput> = {}) =>
    describeLane({
      endpointStatus: 'active',
      queueDepth: 3,
      head: { status: 'in_flight', nextAttemptAt: null },
      lease: lease(),
      leaseMs: LEASE_MS,
      now,
      ...over,
    });

  const idle = { state: 'idle', blocked: false, blockedReason: null };
  const delivering = { state: 'delivering', blocked: false, blockedReason: null };
  const blocked = (blockedReason: string) => ({ state: 'blocked', blocked: true, blockedReason });

  const retryingHead = { status: 'awaiting_retry' as const, nextAttemptAt: at(5_000) };
  const staleLease = lease({ renewedAt: at(-60_000) });
  const circuitLease = lease({ blockedReason: 'circuit_open', blockedUntil: at(20_000) });

  describe('paused and disabled endpoints', () => {
    it.each<[EndpointStatus, string, Partial<DescribeInput>]>([
      ['paused', 'with a queue', {}],
      ['paused', 'with an empty queue', { queueDepth: 0, head: null, lease: null }],
      ['paused', 'with a retrying head', { head: retryingHead }],
      ['paused', 'with an open circuit', { lease: circuitLease }],
      ['paused', 'with a stale lease', { lease: staleLease }],
      ['disabled', 'with a queue', {}],
      ['disabled', 'with an empty queue', { queueDepth: 0, head: null, lease: null }],
      ['disabled', 'with a retrying head', { head: retryingHead }],
      ['disabled', 'with an open circuit', { lease: circuitLease }],
      ['disabled', 'with a stale lease', { lease: staleLease }],
    ])('a %s endpoint %s is paused, blocked for that reason', (status, _label, over) => {
      expect(describeIt({ ...over, endpointStatus: status })).toEqual({
        state: 'paused',
        blocked: true,
        blockedReason: status,
      });
    });
  });

  describe('idle', () => {
    it.each<[string, Partial<DescribeInput>]>([
      ['the queue is empty', { queueDepth: 0, head: null, lease: null }],
      ['the depth is 0, even with a head left over', { queueDepth: 0 }],
      ['there is no head', { queueDepth: 2, head: null }],
      ['the queue is empty behind a retrying head', { queueDepth: 0, head: retryingHead }],
      ['the queue is empty with a stale lease', { queueDepth: 0, head: null, lease: staleLease }],
      ['the queue is empty with an open circuit', { queueDepth: 0, lease: circuitLease }],
    ])('when %s', (_label, over) => {
      expect(describeIt(over)).toEqual(idle);
    });
  });

  describe('delivering', () => {
    it.each<[string, Partial<DescribeInput>]>([
      ['a head in flight under a fresh lease', {}],
      ['a waiting head and no lease', { head: { status: 'fifo_waiting', nextAttemptAt: null } }],
      ['a head whose retry is due now', { head: { status: 'awaiting_retry', nextAttemptAt: now } }],
      [
        'a head whose retry is overdue',
        { head: { status: 'awaiting_retry', nextAttemptAt: at(-1) } },
      ],
      ['a retry head without a time', { head: { status: 'awaiting_retry', nextAttemptAt: null } }],
      [
        'a non-retry head with a future time',
        { head: { status: 'fifo_waiting', nextAttemptAt: at(5_000) } },
      ],
      [
        'the circuit wait ending now',
        { lease: lease({ blockedReason: 'circuit_open', blockedUntil: now }) },
      ],
      [
        'the circuit wait already over',
        { lease: lease({ blockedReason: 'circuit_open', blockedUntil: at(-1) }) },
      ],
      [
        'a circuit reason without an end',
        { lease: lease({ blockedReason: 'circuit_open', blockedUntil: null }) },
      ],
      ['a lease renewed exactly two intervals ago', { lease: lease({ renewedAt: at(-10_000) }) }],
      [
        'a stale renewal on a lease that ran out',
        { lease: lease({ leaseUntil: now, renewedAt: at(-HOUR) }) },
      ],
      ['a lease without an owner', { lease: lease({ owner: null, renewedAt: at(-HOUR) }) }],
      ['no lease at all', { lease: null }],
    ])('with %s', (_label, over) => {
      expect(describeIt(over)).toEqual(delivering);
    });
  });

  describe('blocked', () => {
    it('by a retry: the head awaits an attempt due later', () => {
      expect(describeIt({ head: retryingHead })).toEqual(blocked('retrying'));
      expect(describeIt({ head: { status: 'awaiting_retry', nextAttemptAt: at(1) } })).toEqual(
        blocked('retrying'),
      );
    });

    it('by the circuit: the owner says it waits for the cooldown, until later', () => {
      expect(describeIt({ lease: circuitLease })).toEqual(blocked('circuit_open'));
      expect(
        describeIt({ lease: lease({ blockedReason: 'circuit_open', blockedUntil: at(1) }) }),
      ).toEqual(blocked('circuit_open'));
    });

    it('by the lease: a running lease whose owner stopped renewing it', () => {
      expect(describeIt({ lease: staleLease })).toEqual(blocked('lease'));
      expect(describeIt({ lease: lease({ renewedAt: at(-10_001) }) })).toEqual(blocked('lease'));
      expect(
        describeIt({ lease: lease({ renewedAt: at(-401), leaseUntil: at(1) }), leaseMs: 1_000 }),
      ).toEqual(blocked('lease'));
    });

    it('retrying beats circuit_open and lease', () => {
      expect(describeIt({ head: retryingHead, lease: circuitLease })).toEqual(blocked('retrying'));
      expect(describeIt({ head: retryingHead, lease: staleLease })).toEqual(blocked('retrying'));
      expect(
        describeIt({
          head: retryingHead,
          lease: lease({
            renewedAt: at(-60_000),
            blockedReason: 'circuit_open',
            blockedUntil: at(20_000),
          }),
        }),
      ).toEqual(blocked('retrying'));
    });

    it('circuit_open beats lease, and the lease shows once the circuit wait ends', () => {
      const staleCircuit = (blockedUntil: Date) =>
        lease({ renewedAt: at(-60_000), blockedReason: 'circuit_open', blockedUntil });
      expect(describeIt({ lease: staleCircuit(at(20_000)) })).toEqual(blocked('circuit_open'));
      expect(describeIt({ lease: staleCircuit(now) })).toEqual(blocked('lease'));
    });

    it('moves on to the circuit once the retry is due', () => {
      expect(
        describeIt({ head: { status: 'awaiting_retry', nextAttemptAt: now }, lease: circuitLease }),
      ).toEqual(blocked('circuit_open'));
    });
  });
});

describe('emptyWindowStep', () => {
  const cases: [boolean, boolean, boolean, EmptyWindowStep][] = [
    // readWholeQueue, woken, lingered → step
    [false, false, false, 'read-queue'],
    [false, false, true, 'read-queue'],
    [false, true, false, 'read-queue'],
    [false, true, true, 'read-queue'],
    [true, true, false, 'read-queue'],
    [true, true, true, 'read-queue'],
    [true, false, false, 'linger'],
    [true, false, true, 'release-if-empty'],
  ];
  it.each(cases)(
    'whole queue read %s, woken %s, lingered %s → %s',
    (readWholeQueue, woken, lingered, step) => {
      expect(emptyWindowStep({ readWholeQueue, woken, lingered })).toBe(step);
    },
  );
});

describe('laneWindowBytes', () => {
  const KIB = 1024;
  it("gives each lane its own bound while the process's lanes stay within theirs", () => {
    expect(laneWindowBytes(0, 256 * KIB, 32 * 1024 * KIB)).toBe(256 * KIB);
    expect(laneWindowBytes(1, 256 * KIB, 32 * 1024 * KIB)).toBe(256 * KIB);
    expect(laneWindowBytes(128, 256 * KIB, 32 * 1024 * KIB)).toBe(256 * KIB);
  });

  it('shares what all lanes may hold evenly once more lanes run', () => {
    expect(laneWindowBytes(129, 256 * KIB, 32 * 1024 * KIB)).toBe(
      Math.floor((32 * 1024 * KIB) / 129),
    );
    expect(laneWindowBytes(1_000, 256 * KIB, 32 * 1024 * KIB)).toBe(33_554);
    expect(laneWindowBytes(10_000, 256 * KIB, 32 * 1024 * KIB)).toBe(3_355);
    // However many lanes run, their windows hold at most the whole.
    for (const lanes of [129, 777, 5_000, 123_456])
      expect(lanes * laneWindowBytes(lanes, 256 * KIB, 32 * 1024 * KIB)).toBeLessThanOrEqual(
        32 * 1024 * KIB,
      );
  });

  it('still reads the heads, alone and without their payloads, when there is nothing to share', () => {
    expect(laneWindowBytes(10, 256 * KIB, 0)).toBe(1);
    expect(laneWindowBytes(10, 0, 32 * 1024 * KIB)).toBe(1);
    expect(laneWindowBytes(64 * 1024 * 1024, 256 * KIB, 32 * 1024 * KIB)).toBe(1);
  });
});
