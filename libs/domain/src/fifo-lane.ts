import { circuitGate, CircuitPolicy, CircuitState } from './circuit-breaker';
import type { DlqReason, EndpointStatus, MessageStatus } from './model';

/**
 * FIFO lanes: the rules of one endpoint's ordered queue. The head (its oldest unfinished message)
 * is the only one ever delivered; these functions decide what the lane does with it next and how
 * the queue is described to users. The dispatcher's lane runner wires them to PostgreSQL.
 */

export const LANE_BLOCKED_REASONS = [
  'retrying',
  'circuit_open',
  'disabled',
  'paused',
  'lease',
] as const;
export type LaneBlockedReason = (typeof LANE_BLOCKED_REASONS)[number];

/** The endpoint as the lane reads it, fresh, before each step; null once it no longer exists. */
export interface LaneEndpoint {
  status: EndpointStatus;
  fifoEnabled: boolean;
  deleted: boolean;
  /** The endpoint's retry policy maxAgeMs: how long a paused endpoint's messages are held. */
  maxAgeMs: number;
}

export interface LaneHead {
  status: MessageStatus;
  /** For a head awaiting a retry: when its next attempt is due. */
  nextAttemptAt: Date | null;
  /** When the message's event was accepted: its place in the order and its age. */
  acceptedAt: Date;
}

export type LaneStep =
  /** The endpoint is gone: every queued message goes to the DLQ. */
  | { action: 'dead-letter-all'; reason: Extract<DlqReason, 'endpoint_deleted'> }
  /** FIFO was turned off: every queued message goes back to normal (unordered) delivery. */
  | { action: 'hand-back' }
  /** The head can never be delivered in time: it goes to the DLQ and the next one proceeds. */
  | { action: 'expire-head'; reason: Extract<DlqReason, 'fifo_expired' | 'max_age'> }
  /** Nothing may be sent before `until`; the lane looks again then (no attempt is used). */
  | { action: 'wait'; until: Date; reason: Exclude<LaneBlockedReason, 'lease'> }
  /** Send the head now; `circuit` is the endpoint's circuit state once this attempt is let through. */
  | { action: 'deliver'; circuit: CircuitState };

/**
 * What the lane does with its head now. The order of the checks is the order of precedence:
 * a deleted endpoint or FIFO turned off settles the whole queue; retention ends a head's wait
 * whatever the endpoint's state; a disabled or paused endpoint holds the queue; then the head's
 * own retry time and the circuit breaker. Waits are capped at `recheckMs` so that changes to the
 * endpoint (enable, resume, delete, FIFO off) are seen within that time.
 */
export function nextLaneStep(input: {
  endpoint: LaneEndpoint | null;
  head: LaneHead;
  now: Date;
  /** Messages accepted before this are past the organization's retention. */
  retentionCutoff: Date;
  recheckMs: number;
  circuit: CircuitState;
  circuitPolicy: CircuitPolicy;
}): LaneStep {
  const { endpoint, head, now } = input;
  const capped = (at: number) => new Date(Math.min(at, now.getTime() + input.recheckMs));
  if (!endpoint || endpoint.deleted)
    return { action: 'dead-letter-all', reason: 'endpoint_deleted' };
  if (!endpoint.fifoEnabled) return { action: 'hand-back' };
  if (head.acceptedAt.getTime() < input.retentionCutoff.getTime()) {
    return { action: 'expire-head', reason: 'fifo_expired' };
  }
  if (endpoint.status === 'disabled') {
    return { action: 'wait', until: capped(Infinity), reason: 'disabled' };
  }
  if (endpoint.status === 'paused') {
    if (now.getTime() - head.acceptedAt.getTime() > endpoint.maxAgeMs) {
      return { action: 'expire-head', reason: 'max_age' };
    }
    return { action: 'wait', until: capped(Infinity), reason: 'paused' };
  }
  if (
    head.status === 'awaiting_retry' &&
    head.nextAttemptAt !== null &&
    head.nextAttemptAt.getTime() > now.getTime()
  ) {
    return { action: 'wait', until: capped(head.nextAttemptAt.getTime()), reason: 'retrying' };
  }
  const gate = circuitGate(input.circuit, now.getTime(), input.circuitPolicy);
  if (!gate.allowed) return { action: 'wait', until: capped(gate.retryAt), reason: 'circuit_open' };
  return { action: 'deliver', circuit: gate.next };
}

/**
 * How often a lane's owner renews its lease: often enough that a stopped owner shows as such
 * within seconds (two missed renewals), and at least five times per lease.
 */
export function laneRenewEveryMs(leaseMs: number): number {
  return Math.max(100, Math.min(5_000, Math.floor(leaseMs / 5)));
}

/**
 * Has a lane's lease, last given or renewed by a statement sent at `confirmedAt`, come so near its
 * end that its owner must stop the lane (send nothing more) without a renewal? Two renewal
 * intervals before the lease ends: the lease runs from when the database ran the statement, later
 * than it was sent, so by then another worker cannot yet have taken the lane, and the margin
 * covers clocks that differ by less than that.
 */
export function laneLeaseLapsing(confirmedAt: number, now: number, leaseMs: number): boolean {
  return now - confirmedAt >= leaseMs - 2 * laneRenewEveryMs(leaseMs);
}

/** A lane's lease as stored: who runs it, until when, and when its owner last renewed it. */
export interface LaneLease {
  owner: string | null;
  leaseUntil: Date | null;
  renewedAt: Date | null;
  /** What the owner last said holds the lane up, when it is not visible in the messages. */
  blockedReason: 'circuit_open' | null;
  blockedUntil: Date | null;
}

export type LaneState = 'idle' | 'delivering' | 'blocked' | 'paused';

export interface LaneDescription {
  state: LaneState;
  blocked: boolean;
  blockedReason: LaneBlockedReason | null;
}

/**
 * How a lane is described to users (`fifo-state`). Paused and disabled endpoints hold their
 * queue (`paused`); an empty queue is `idle`; otherwise the head is blocked while it waits for a
 * retry, for the circuit's cooldown, or for the lease of a delivery whose worker stopped.
 */
export function describeLane(input: {
  endpointStatus: EndpointStatus;
  queueDepth: number;
  head: Pick<LaneHead, 'status' | 'nextAttemptAt'> | null;
  lease: LaneLease | null;
  leaseMs: number;
  now: Date;
}): LaneDescription {
  const { now, lease } = input;
  if (input.endpointStatus === 'disabled' || input.endpointStatus === 'paused') {
    return { state: 'paused', blocked: true, blockedReason: input.endpointStatus };
  }
  if (input.queueDepth === 0 || input.head === null) {
    return { state: 'idle', blocked: false, blockedReason: null };
  }
  const blocked = (blockedReason: LaneBlockedReason): LaneDescription => ({
    state: 'blocked',
    blocked: true,
    blockedReason,
  });
  const head = input.head;
  if (
    head.status === 'awaiting_retry' &&
    head.nextAttemptAt !== null &&
    head.nextAttemptAt.getTime() > now.getTime()
  ) {
    return blocked('retrying');
  }
  if (
    lease?.blockedReason === 'circuit_open' &&
    lease.blockedUntil !== null &&
    lease.blockedUntil.getTime() > now.getTime()
  ) {
    return blocked('circuit_open');
  }
  if (isLeaseStale(lease, input.leaseMs, now)) return blocked('lease');
  return { state: 'delivering', blocked: false, blockedReason: null };
}

/**
 * A lease still running whose owner stopped renewing it: its worker died, and the lane waits for
 * the lease to pass before the head is sent again.
 */
export function isLeaseStale(lease: LaneLease | null, leaseMs: number, now: Date): boolean {
  if (!lease || lease.owner === null || lease.leaseUntil === null || lease.renewedAt === null) {
    return false;
  }
  if (lease.leaseUntil.getTime() <= now.getTime()) return false;
  return now.getTime() - lease.renewedAt.getTime() > 2 * laneRenewEveryMs(leaseMs);
}

/** What a lane whose window of messages is used up does next. */
export type EmptyWindowStep =
  /** Read the head and the messages behind it from the store. */
  | 'read-queue'
  /** Keep the lease and wait (at most `LANE_LINGER_MS`) to be told that messages were queued. */
  | 'linger'
  /** Give the lane up, in the statement that checks its queue is empty. */
  | 'release-if-empty';

/**
 * A lane whose window is used up after a read that held its whole queue reads nothing more
 * until it is told that messages were queued: it lingers, keeping its lease, so a lane fed a
 * message at a time neither gives its lease up nor takes it again per message; then it gives the
 * lane up in the statement that checks the queue is empty (which finds, and so reads, anything
 * queued meanwhile by another process). Any other window (the start, a read of a full window, a
 * wait, a failed step, a wake) is followed by a read.
 */
export function emptyWindowStep(input: {
  /** The last read returned fewer messages than asked for: it held the whole queue then. */
  readWholeQueue: boolean;
  /** Messages were queued in this lane since that read (a wake). */
  woken: boolean;
  /** The lane has lingered since that read without being woken. */
  lingered: boolean;
}): EmptyWindowStep {
  if (input.woken || !input.readWholeQueue) return 'read-queue';
  return input.lingered ? 'release-if-empty' : 'linger';
}

/** How long a lane with an empty queue keeps its lease waiting for its next message. */
export const LANE_LINGER_MS = 500;

/**
 * The bound a lane's window read takes: its messages' payloads come to at most this many bytes
 * (the head always comes, without its payload when that alone is larger: it is read when the head
 * is about to be sent). It is the lane's own bound, or its even part of what all the process's
 * `lanes` may hold, whichever is less, and at least 1 (then each head comes alone, without its
 * payload: a payload is at least `{}`).
 */
export function laneWindowBytes(lanes: number, perLane: number, allLanes: number): number {
  return Math.max(1, Math.min(perLane, Math.floor(allLanes / Math.max(1, lanes))));
}
