import { describeLane, LaneBlockedReason, LaneLease } from './fifo-lane';
import type { EndpointStatus, MessageStatus } from './model';

/**
 * Blocked episodes of FIFO lanes, for the `fifo.queue.blocked` and `fifo.queue.unblocked`
 * operational events. A periodic sweep looks at every lane with queued messages; an episode
 * begins when it first sees a lane blocked and belongs to the head it saw: it lasts while that
 * head stays at the front without being delivered normally, and ends when the head moves on (or
 * the queue empties, or the lane is no longer held). The episode is stored with the lane, so a
 * restart or another dispatcher's sweep continues it instead of starting again.
 */

/** A lane as the sweep reads it. */
export interface SweptLane {
  endpointStatus: EndpointStatus;
  deleted: boolean;
  head: {
    messageId: string;
    status: MessageStatus;
    attempts: number;
    nextAttemptAt: Date | null;
  } | null;
  lease: LaneLease | null;
}

/** What holds a lane's head up, or null when the lane moves (or is empty, or gone). */
export interface LaneBlockage {
  headId: string;
  reason: LaneBlockedReason;
}

/**
 * Whether the lane's head is held: by a paused or disabled endpoint, an open circuit, a stale
 * lease, a retry still ahead (as `fifo-state` describes it), or a head that has already failed
 * and is being tried again (between its retries the lane looks like it delivers).
 */
export function laneBlockage(lane: SweptLane, leaseMs: number, now: Date): LaneBlockage | null {
  if (lane.deleted || lane.head === null) return null;
  const description = describeLane({
    endpointStatus: lane.endpointStatus,
    queueDepth: 1,
    head: lane.head,
    lease: lane.lease,
    leaseMs,
    now,
  });
  if (description.blockedReason !== null) {
    return { headId: lane.head.messageId, reason: description.blockedReason };
  }
  if (lane.head.attempts > 0) return { headId: lane.head.messageId, reason: 'retrying' };
  return null;
}

/** A lane's open episode as stored. */
export interface BlockedEpisode {
  headId: string;
  since: Date;
  reportedAt: Date | null;
}

export type EpisodeStep =
  /** The stored episode is over; `fifo.queue.unblocked` follows if it was reported. */
  | { action: 'end'; headId: string }
  /** A new episode begins now for this head. */
  | { action: 'start'; headId: string; reason: LaneBlockedReason }
  /** The episode has lasted past the threshold and was not reported: `fifo.queue.blocked`. */
  | { action: 'report'; headId: string; reason: LaneBlockedReason };

/**
 * What the sweep does about one lane, in order. Each step is applied by a conditional write that
 * names the head, so of two sweeps looking at once only one ends, starts or reports an episode.
 */
export function blockedEpisodeSteps(input: {
  stored: BlockedEpisode | null;
  observed: LaneBlockage | null;
  now: Date;
  thresholdMs: number;
}): EpisodeStep[] {
  const { stored, observed, now, thresholdMs } = input;
  const steps: EpisodeStep[] = [];
  const continues = stored !== null && observed !== null && observed.headId === stored.headId;
  if (stored !== null && !continues) steps.push({ action: 'end', headId: stored.headId });
  if (observed === null) return steps;
  if (!continues) {
    steps.push({ action: 'start', headId: observed.headId, reason: observed.reason });
    return steps;
  }
  if (stored.reportedAt === null && now.getTime() - stored.since.getTime() >= thresholdMs) {
    steps.push({ action: 'report', headId: observed.headId, reason: observed.reason });
  }
  return steps;
}
