import { blockedEpisodeSteps, laneBlockage, SweptLane } from './fifo-blocked';
import type { LaneLease } from './fifo-lane';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const at = (offsetMs: number) => new Date(NOW + offsetMs);
const now = at(0);
const LEASE_MS = 300_000;
const HOUR = 3_600_000;

const lease = (over: Partial<LaneLease> = {}): LaneLease => ({
  owner: 'dispatcher-1',
  leaseUntil: at(LEASE_MS),
  renewedAt: now,
  blockedReason: null,
  blockedUntil: null,
  ...over,
});

const lane = (over: Partial<SweptLane> = {}, head: Partial<NonNullable<SweptLane['head']>> = {}) =>
  ({
    endpointStatus: 'active',
    deleted: false,
    head: { messageId: 'msg_1', status: 'fifo_waiting', attempts: 0, nextAttemptAt: null, ...head },
    lease: lease(),
    ...over,
  }) as SweptLane;

describe('laneBlockage', () => {
  it('is null for a lane that moves: a fresh head, nothing holding it', () => {
    expect(laneBlockage(lane(), LEASE_MS, now)).toBeNull();
    expect(laneBlockage(lane({}, { status: 'in_flight' }), LEASE_MS, now)).toBeNull();
  });

  it('is null for an empty queue and for a deleted endpoint', () => {
    expect(laneBlockage(lane({ head: null }), LEASE_MS, now)).toBeNull();
    expect(
      laneBlockage(lane({ deleted: true, endpointStatus: 'paused' }), LEASE_MS, now),
    ).toBeNull();
  });

  it.each(['paused', 'disabled'] as const)('holds the head of a %s endpoint', (status) => {
    expect(laneBlockage(lane({ endpointStatus: status }), LEASE_MS, now)).toEqual({
      headId: 'msg_1',
      reason: status,
    });
  });

  it('holds a head waiting for its retry, and one that failed and is being tried again', () => {
    expect(
      laneBlockage(
        lane({}, { status: 'awaiting_retry', attempts: 1, nextAttemptAt: at(1_000) }),
        LEASE_MS,
        now,
      ),
    ).toEqual({ headId: 'msg_1', reason: 'retrying' });
    expect(laneBlockage(lane({}, { status: 'in_flight', attempts: 3 }), LEASE_MS, now)).toEqual({
      headId: 'msg_1',
      reason: 'retrying',
    });
    expect(
      laneBlockage(
        lane({}, { status: 'awaiting_retry', attempts: 2, nextAttemptAt: at(-1) }),
        LEASE_MS,
        now,
      ),
    ).toEqual({ headId: 'msg_1', reason: 'retrying' });
  });

  it('holds a head behind an open circuit and behind a stale lease', () => {
    expect(
      laneBlockage(
        lane({ lease: lease({ blockedReason: 'circuit_open', blockedUntil: at(5_000) }) }),
        LEASE_MS,
        now,
      ),
    ).toEqual({ headId: 'msg_1', reason: 'circuit_open' });
    expect(laneBlockage(lane({ lease: lease({ renewedAt: at(-60_000) }) }), LEASE_MS, now)).toEqual(
      { headId: 'msg_1', reason: 'lease' },
    );
  });
});

describe('blockedEpisodeSteps', () => {
  const threshold = 10_000;
  const blocked = { headId: 'msg_1', reason: 'paused' as const };

  it('does nothing for a lane that moves with no episode open', () => {
    expect(
      blockedEpisodeSteps({ stored: null, observed: null, now, thresholdMs: threshold }),
    ).toEqual([]);
  });

  it('starts an episode when a lane is first seen blocked, without reporting it yet', () => {
    expect(blockedEpisodeSteps({ stored: null, observed: blocked, now, thresholdMs: 0 })).toEqual([
      { action: 'start', headId: 'msg_1', reason: 'paused' },
    ]);
  });

  it('reports an episode once, when it has lasted the threshold', () => {
    const stored = { headId: 'msg_1', since: at(-threshold + 1), reportedAt: null };
    expect(blockedEpisodeSteps({ stored, observed: blocked, now, thresholdMs: threshold })).toEqual(
      [],
    );
    const due = { ...stored, since: at(-threshold) };
    expect(
      blockedEpisodeSteps({ stored: due, observed: blocked, now, thresholdMs: threshold }),
    ).toEqual([{ action: 'report', headId: 'msg_1', reason: 'paused' }]);
    const reported = { ...due, reportedAt: at(-1) };
    expect(
      blockedEpisodeSteps({ stored: reported, observed: blocked, now, thresholdMs: threshold }),
    ).toEqual([]);
  });

  it('keeps the episode whatever now holds the same head (paused, then retrying)', () => {
    const stored = { headId: 'msg_1', since: at(-1_000), reportedAt: null };
    expect(
      blockedEpisodeSteps({
        stored,
        observed: { headId: 'msg_1', reason: 'retrying' },
        now,
        thresholdMs: threshold,
      }),
    ).toEqual([]);
  });

  it('ends the episode when the lane moves, the queue empties or the endpoint goes', () => {
    const stored = { headId: 'msg_1', since: at(-HOUR), reportedAt: at(-1_000) };
    expect(blockedEpisodeSteps({ stored, observed: null, now, thresholdMs: threshold })).toEqual([
      { action: 'end', headId: 'msg_1' },
    ]);
  });

  it('ends the episode of a head that moved on and starts one for the next head held', () => {
    const stored = { headId: 'msg_1', since: at(-HOUR), reportedAt: null };
    expect(
      blockedEpisodeSteps({
        stored,
        observed: { headId: 'msg_2', reason: 'retrying' },
        now,
        thresholdMs: threshold,
      }),
    ).toEqual([
      { action: 'end', headId: 'msg_1' },
      { action: 'start', headId: 'msg_2', reason: 'retrying' },
    ]);
  });
});
