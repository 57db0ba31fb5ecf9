import type { EndpointStatus } from './model';

/** What a FIFO lane is doing, as an operator watches it. */
export type LaneActivity =
  | { state: 'running' }
  | { state: 'retrying' }
  | { state: 'queued' }
  | { state: 'blocked'; reason: 'endpoint_paused' | 'endpoint_disabled' | 'circuit_open' };

/** A lane as the store sees it: its endpoint's status and what its queued messages are doing. */
export interface LaneFacts {
  endpointStatus: EndpointStatus;
  /** Its head is being sent now. */
  inFlight: boolean;
  /** Its head waits for its next attempt. */
  awaitingRetry: boolean;
  /** Its runner holds it while the endpoint's circuit breaker is open. */
  circuitOpen: boolean;
}

/**
 * A lane of a paused or disabled endpoint is blocked whatever its head does (nothing new is sent
 * until the endpoint is resumed or enabled), and so is one whose runner waits for the endpoint's
 * open circuit to cool down; otherwise it is running while its head is sent,
 * retrying while its head waits for its next attempt, and queued while its messages wait for the
 * lane's holder to pick the head up.
 */
export function laneActivity(facts: LaneFacts): LaneActivity {
  switch (facts.endpointStatus) {
    case 'paused':
      return { state: 'blocked', reason: 'endpoint_paused' };
    case 'disabled':
      return { state: 'blocked', reason: 'endpoint_disabled' };
    case 'active':
      if (facts.circuitOpen) return { state: 'blocked', reason: 'circuit_open' };
      if (facts.inFlight) return { state: 'running' };
      if (facts.awaitingRetry) return { state: 'retrying' };
      return { state: 'queued' };
    default: {
      const unreachable: never = facts.endpointStatus;
      throw new Error(`unknown endpoint status ${String(unreachable)}`);
    }
  }
}
