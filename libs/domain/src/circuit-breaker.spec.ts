import {
  circuitAfterAttempt,
  circuitGate,
  CircuitPolicy,
  CircuitState,
  CLOSED,
  DEFAULT_CIRCUIT_POLICY,
  probeWaitMs,
} from './circuit-breaker';

const t0 = 1_767_225_600_000; // 2026-01-01T00:00:00Z
const policy: CircuitPolicy = { failureThreshold: 3, cooldownMs: 30_000 };

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

/** Reports results one after another, all at `now`. */
function report(
  state: CircuitState,
  results: Array<'success' | 'failure' | 'neutral'>,
  now = t0,
  p: CircuitPolicy = policy,
): CircuitState {
  return results.reduce((current, result) => circuitAfterAttempt(current, result, now, p), state);
}

describe('DEFAULT_CIRCUIT_POLICY', () => {
  it('opens after 10 consecutive failures and cools down for 30 s', () => {
    expect(DEFAULT_CIRCUIT_POLICY).toEqual({ failureThreshold: 10, cooldownMs: 30_000 });
  });

  it('cannot be changed by one of the many endpoints sharing it', () => {
    expect(() => {
      DEFAULT_CIRCUIT_POLICY.failureThreshold = 1;
    }).toThrow(TypeError);
  });
});

describe('CLOSED', () => {
  it('is closed with no failures counted, and shared safely', () => {
    expect(CLOSED).toEqual({ state: 'closed', consecutiveFailures: 0 });
    expect(Object.isFrozen(CLOSED)).toBe(true);
  });
});

describe('probeWaitMs', () => {
  it('is 1 s, or the cooldown when that is shorter', () => {
    expect(probeWaitMs({ failureThreshold: 1, cooldownMs: 30_000 })).toBe(1_000);
    expect(probeWaitMs({ failureThreshold: 1, cooldownMs: 1_000 })).toBe(1_000);
    expect(probeWaitMs({ failureThreshold: 1, cooldownMs: 400 })).toBe(400);
  });
});

describe('circuitGate', () => {
  describe('closed', () => {
    it('lets every attempt through, not as a probe, and changes nothing', () => {
      for (const state of [CLOSED, closed(2)]) {
        expect(circuitGate(state, t0, policy)).toEqual({
          allowed: true,
          next: state,
          probe: false,
        });
      }
    });
  });

  describe('open', () => {
    it('refuses during the cooldown, with retryAt at its end, and stays as it is', () => {
      const state = open(t0);
      for (const now of [t0, t0 + 1, t0 + 29_999]) {
        expect(circuitGate(state, now, policy)).toEqual({
          allowed: false,
          next: state,
          retryAt: t0 + 30_000,
        });
      }
    });

    it('lets one probe through exactly at openedAt + cooldownMs and goes half open', () => {
      expect(circuitGate(open(t0, 4), t0 + 30_000, policy)).toEqual({
        allowed: true,
        probe: true,
        next: { state: 'half_open', probeStartedAt: t0 + 30_000, consecutiveFailures: 4 },
      });
    });

    it('lets one probe through long after the cooldown, started at now', () => {
      expect(circuitGate(open(t0), t0 + 3_600_000, policy)).toEqual({
        allowed: true,
        probe: true,
        next: halfOpen(t0 + 3_600_000),
      });
    });

    it('keeps refusing until openedAt + cooldownMs if the clock steps back', () => {
      expect(circuitGate(open(t0), t0 - 60_000, policy)).toEqual({
        allowed: false,
        next: open(t0),
        retryAt: t0 + 30_000,
      });
    });

    it('uses the cooldown of the policy it is given', () => {
      const short = { failureThreshold: 3, cooldownMs: 1_000 };
      expect(circuitGate(open(t0), t0 + 999, short)).toMatchObject({
        allowed: false,
        retryAt: t0 + 1_000,
      });
      expect(circuitGate(open(t0), t0 + 1_000, short)).toMatchObject({
        allowed: true,
        probe: true,
      });
    });
  });

  describe('half_open with a probe out', () => {
    const probing = halfOpen(t0);

    it('refuses everything else, asking again after the short probe wait', () => {
      for (const now of [t0, t0 + 1, t0 + 15_000]) {
        expect(circuitGate(probing, now, policy)).toEqual({
          allowed: false,
          next: probing,
          retryAt: now + 1_000,
        });
      }
    });

    it('still refuses when the probe has been out exactly cooldownMs', () => {
      expect(circuitGate(probing, t0 + 30_000, policy)).toEqual({
        allowed: false,
        next: probing,
        retryAt: t0 + 31_000,
      });
    });

    it('counts a probe out longer than cooldownMs as lost and sends another', () => {
      expect(circuitGate(probing, t0 + 30_001, policy)).toEqual({
        allowed: true,
        probe: true,
        next: halfOpen(t0 + 30_001),
      });
    });

    it('waits at most the cooldown when that is shorter than the probe wait', () => {
      const tiny = { failureThreshold: 1, cooldownMs: 200 };
      expect(circuitGate(probing, t0 + 50, tiny)).toMatchObject({
        allowed: false,
        retryAt: t0 + 250,
      });
    });

    it('keeps refusing if the clock steps back before the probe started', () => {
      expect(circuitGate(probing, t0 - 60_000, policy)).toEqual({
        allowed: false,
        next: probing,
        retryAt: t0 - 59_000,
      });
    });
  });

  describe('half_open with no probe out', () => {
    it('lets the next attempt through as the probe', () => {
      expect(circuitGate(halfOpen(null, 5), t0, policy)).toEqual({
        allowed: true,
        probe: true,
        next: halfOpen(t0, 5),
      });
    });
  });

  it('lets exactly one probe through however many attempts ask at once', () => {
    let state = open(t0);
    const now = t0 + 30_000;
    const gates = Array.from({ length: 5 }, () => {
      const gate = circuitGate(state, now, policy);
      state = gate.next;
      return gate;
    });
    expect(gates.filter((gate) => gate.allowed)).toHaveLength(1);
    expect(gates[0]).toMatchObject({ allowed: true, probe: true });
    for (const gate of gates.slice(1)) {
      expect(gate).toEqual({ allowed: false, next: halfOpen(now), retryAt: now + 1_000 });
    }
  });
});

describe('circuitAfterAttempt', () => {
  describe('closed', () => {
    it('counts consecutive failures below the threshold', () => {
      expect(report(CLOSED, ['failure'])).toEqual(closed(1));
      expect(report(CLOSED, ['failure', 'failure'])).toEqual(closed(2));
    });

    it('opens on the failure that reaches the threshold, at now', () => {
      expect(circuitAfterAttempt(closed(2), 'failure', t0 + 5, policy)).toEqual(open(t0 + 5, 3));
    });

    it('opens on the first failure with a threshold of 1', () => {
      const one = { failureThreshold: 1, cooldownMs: 1_000 };
      expect(circuitAfterAttempt(CLOSED, 'failure', t0, one)).toEqual(open(t0, 1));
    });

    it('opens only on the Nth consecutive failure with the default threshold of 10', () => {
      const nine = report(CLOSED, Array(9).fill('failure'), t0, DEFAULT_CIRCUIT_POLICY);
      expect(nine).toEqual(closed(9));
      expect(circuitAfterAttempt(nine, 'failure', t0, DEFAULT_CIRCUIT_POLICY)).toEqual(
        open(t0, 10),
      );
    });

    it('opens only on the 1000th consecutive failure with the largest threshold', () => {
      const max = { failureThreshold: 1000, cooldownMs: 1_000 };
      expect(report(CLOSED, Array(999).fill('failure'), t0, max)).toEqual(closed(999));
      expect(report(CLOSED, Array(1000).fill('failure'), t0, max)).toEqual(open(t0, 1000));
    });

    it('resets the count on a success, so failures must be consecutive', () => {
      expect(report(CLOSED, ['failure', 'failure', 'success'])).toBe(CLOSED);
      expect(report(CLOSED, ['failure', 'failure', 'success', 'failure', 'failure'])).toEqual(
        closed(2),
      );
    });

    it('neither counts nor resets on a neutral result', () => {
      const state = closed(2);
      expect(circuitAfterAttempt(state, 'neutral', t0, policy)).toBe(state);
      expect(report(CLOSED, ['failure', 'neutral', 'failure', 'neutral', 'failure'])).toEqual(
        open(t0, 3),
      );
    });

    it('opens on the next failure when the threshold was lowered below the count', () => {
      expect(circuitAfterAttempt(closed(7), 'failure', t0, policy)).toEqual(open(t0, 8));
    });
  });

  describe('open', () => {
    it('stays open on failures of attempts started before it opened, without moving openedAt', () => {
      expect(circuitAfterAttempt(open(t0, 3), 'failure', t0 + 20_000, policy)).toEqual(open(t0, 4));
      const later = report(open(t0, 3), ['failure', 'failure'], t0 + 29_999);
      expect(later).toEqual(open(t0, 5));
      expect(circuitGate(later, t0 + 30_000, policy)).toMatchObject({ allowed: true, probe: true });
    });

    it('changes nothing on a neutral result', () => {
      const state = open(t0);
      expect(circuitAfterAttempt(state, 'neutral', t0 + 1, policy)).toBe(state);
    });

    it('closes on a success: the endpoint answered after all', () => {
      expect(circuitAfterAttempt(open(t0), 'success', t0 + 1, policy)).toBe(CLOSED);
    });
  });

  describe('half_open with a probe out', () => {
    const probing = halfOpen(t0 + 30_000, 3);

    it("closes on the probe's success, with no failures counted", () => {
      expect(circuitAfterAttempt(probing, 'success', t0 + 30_500, policy)).toBe(CLOSED);
    });

    it("re-opens on the probe's failure, with openedAt = now", () => {
      expect(circuitAfterAttempt(probing, 'failure', t0 + 30_500, policy)).toEqual(
        open(t0 + 30_500, 4),
      );
    });

    it('ends the probe on its neutral result without closing or re-opening', () => {
      expect(circuitAfterAttempt(probing, 'neutral', t0 + 30_500, policy)).toEqual(
        halfOpen(null, 3),
      );
    });
  });

  describe('half_open with no probe out', () => {
    const waiting = halfOpen(null, 3);

    it('changes nothing on a neutral result', () => {
      expect(circuitAfterAttempt(waiting, 'neutral', t0, policy)).toBe(waiting);
    });

    it('closes on a success', () => {
      expect(circuitAfterAttempt(waiting, 'success', t0, policy)).toBe(CLOSED);
    });

    it('re-opens on a failure, with openedAt = now', () => {
      expect(circuitAfterAttempt(waiting, 'failure', t0 + 7, policy)).toEqual(open(t0 + 7, 4));
    });
  });
});

describe('a circuit over time', () => {
  const gate = (state: CircuitState, now: number) => circuitGate(state, now, policy);
  const after = (state: CircuitState, result: 'success' | 'failure' | 'neutral', now: number) =>
    circuitAfterAttempt(state, result, now, policy);

  it('opens, cools down, fails a probe, cools down again from the probe, then recovers', () => {
    let state = report(CLOSED, ['failure', 'failure', 'failure'], t0);
    expect(state).toEqual(open(t0, 3));

    let g = gate(state, t0 + 30_000);
    expect(g).toMatchObject({ allowed: true, probe: true });
    state = after(g.next, 'failure', t0 + 31_000);
    expect(state).toEqual(open(t0 + 31_000, 4));

    expect(gate(state, t0 + 60_999)).toMatchObject({ allowed: false, retryAt: t0 + 61_000 });
    g = gate(state, t0 + 61_000);
    expect(g).toMatchObject({ allowed: true, probe: true });
    state = after(g.next, 'success', t0 + 61_200);
    expect(state).toBe(CLOSED);
    expect(gate(state, t0 + 61_201)).toMatchObject({ allowed: true, probe: false });
  });

  it('sends a new probe after a neutral one, and after a lost one', () => {
    let g = gate(open(t0), t0 + 30_000);
    let state = after(g.next, 'neutral', t0 + 30_100);
    g = gate(state, t0 + 30_100);
    expect(g).toEqual({ allowed: true, probe: true, next: halfOpen(t0 + 30_100) });

    // That probe never reports back.
    state = g.next;
    expect(gate(state, t0 + 60_100)).toMatchObject({ allowed: false });
    g = gate(state, t0 + 60_101);
    expect(g).toEqual({ allowed: true, probe: true, next: halfOpen(t0 + 60_101) });
  });
});
