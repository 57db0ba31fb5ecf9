/**
 * A per-endpoint circuit breaker as pure state transitions. The dispatcher keeps one
 * `CircuitState` per endpoint it owns, asks `circuitGate` before each attempt and reports each
 * attempt's result to `circuitAfterAttempt`. What an open circuit means for a message (skipped to
 * the DLQ, or a FIFO head waiting without using an attempt) is the dispatcher's business.
 */
export interface CircuitPolicy {
  failureThreshold: number;
  cooldownMs: number;
}

/** Frozen: it is shared by every endpoint without a policy of its own. */
export const DEFAULT_CIRCUIT_POLICY: CircuitPolicy = Object.freeze({
  failureThreshold: 10,
  cooldownMs: 30_000,
});

/**
 * `consecutiveFailures` is kept in every state so the count that opened the circuit stays visible.
 * In `half_open`, `probeStartedAt` is null while no probe is out: the last one ended without a
 * verdict, and the next gate sends another.
 */
export type CircuitState =
  | { state: 'closed'; consecutiveFailures: number }
  | { state: 'open'; openedAt: number; consecutiveFailures: number }
  | { state: 'half_open'; probeStartedAt: number | null; consecutiveFailures: number };

export const CLOSED: CircuitState = Object.freeze({ state: 'closed', consecutiveFailures: 0 });

export type CircuitGate =
  | { allowed: true; next: CircuitState; probe: boolean }
  | { allowed: false; next: CircuitState; retryAt: number };

/** 'neutral': a result that says nothing about the endpoint being up or down. */
export type CircuitAttemptResult = 'success' | 'failure' | 'neutral';

/** How long callers wait before asking again while a probe is out: short, the probe may be quick. */
export function probeWaitMs(policy: CircuitPolicy): number {
  return Math.min(policy.cooldownMs, 1_000);
}

/** May an attempt start now? In half_open exactly one probe is let through at a time. */
export function circuitGate(state: CircuitState, now: number, policy: CircuitPolicy): CircuitGate {
  switch (state.state) {
    case 'closed':
      return { allowed: true, next: state, probe: false };
    case 'open': {
      const reopensAt = state.openedAt + policy.cooldownMs;
      if (now < reopensAt) return { allowed: false, next: state, retryAt: reopensAt };
      return { allowed: true, next: startProbe(state, now), probe: true };
    }
    case 'half_open': {
      // A probe whose result never came (worker crash, lost report) must not hold the circuit
      // half open forever: after a cooldown it counts as lost and another probe may go.
      const probeOut =
        state.probeStartedAt !== null && now - state.probeStartedAt <= policy.cooldownMs;
      if (probeOut) return { allowed: false, next: state, retryAt: now + probeWaitMs(policy) };
      return { allowed: true, next: startProbe(state, now), probe: true };
    }
    default: {
      const unreachable: never = state;
      throw new Error(`unknown circuit state ${JSON.stringify(unreachable)}`);
    }
  }
}

/**
 * What an attempt's result does to the circuit. Results are not tagged with the gate that let
 * them through, so in half_open any result is taken as the probe's.
 */
export function circuitAfterAttempt(
  state: CircuitState,
  result: CircuitAttemptResult,
  now: number,
  policy: CircuitPolicy,
): CircuitState {
  switch (result) {
    case 'neutral':
      // Only a probe's end matters: without it the circuit would wait for a lost-probe timeout.
      return state.state === 'half_open' && state.probeStartedAt !== null
        ? { ...state, probeStartedAt: null }
        : state;
    case 'success':
      // Even an attempt that started before the circuit opened proves the endpoint answers now;
      // staying open would dead-letter a healthy endpoint's messages for the rest of the cooldown.
      return CLOSED;
    case 'failure':
      return afterFailure(state, now, policy);
    default: {
      const unreachable: never = result;
      throw new Error(`unknown attempt result ${JSON.stringify(unreachable)}`);
    }
  }
}

function afterFailure(state: CircuitState, now: number, policy: CircuitPolicy): CircuitState {
  const consecutiveFailures = state.consecutiveFailures + 1;
  switch (state.state) {
    case 'closed':
      return consecutiveFailures >= policy.failureThreshold
        ? { state: 'open', openedAt: now, consecutiveFailures }
        : { state: 'closed', consecutiveFailures };
    case 'open':
      // An attempt that started before the circuit opened: moving openedAt would stretch the
      // cooldown with every straggler.
      return { ...state, consecutiveFailures };
    case 'half_open':
      return { state: 'open', openedAt: now, consecutiveFailures };
    default: {
      const unreachable: never = state;
      throw new Error(`unknown circuit state ${JSON.stringify(unreachable)}`);
    }
  }
}

function startProbe(state: CircuitState, now: number): CircuitState {
  return {
    state: 'half_open',
    probeStartedAt: now,
    consecutiveFailures: state.consecutiveFailures,
  };
}
