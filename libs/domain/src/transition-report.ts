import { DeliveryEvent, DeliveryState, nextDeliveryState } from './delivery-state';

/**
 * What a transition write did to each message it was asked to move: a write checks each row's
 * state as it finds it when it gets the row (after any concurrent write to it), so a message may
 * have moved on meanwhile; it is then left alone and reported here, never dropped without a word.
 */

/**
 * Why a write left a message unchanged:
 * - `state_not_allowed`: its state is one the event does not leave (it moved on, e.g. finished);
 * - `not_found`: there is no such message (pruned, or never recorded);
 * - `condition_unmet`: its state allows the event but the write's own condition did not hold
 *   (a lane head whose attempt was already recorded), or it changed again after the write.
 */
export const TRANSITION_SKIP_REASONS = [
  'state_not_allowed',
  'not_found',
  'condition_unmet',
] as const;
export type TransitionSkipReason = (typeof TRANSITION_SKIP_REASONS)[number];

export interface SkippedTransition {
  messageId: string;
  event: DeliveryEvent;
  reason: TransitionSkipReason;
  /** The state the message was found in after the write; null when there is no such message. */
  found: DeliveryState | null;
}

export interface TransitionReport {
  /** The messages the write moved on, in the order they were asked for. */
  transitioned: string[];
  /** The messages it left alone, and why. */
  skipped: SkippedTransition[];
}

export const NO_TRANSITIONS: TransitionReport = Object.freeze({
  transitioned: [],
  skipped: [],
}) as TransitionReport;

/**
 * Sorts the messages a write was asked to move (`asked`, each with its event) into those it moved
 * (`moved`) and those it skipped, with the reason read off the state each was found in afterwards
 * (`found`, absent for a message that does not exist). A message asked for twice counts once.
 */
export function reportTransitions(
  asked: readonly { messageId: string; event: DeliveryEvent }[],
  moved: ReadonlySet<string>,
  found: ReadonlyMap<string, DeliveryState>,
): TransitionReport {
  const report: TransitionReport = { transitioned: [], skipped: [] };
  const seen = new Set<string>();
  for (const { messageId, event } of asked) {
    if (seen.has(messageId)) continue;
    seen.add(messageId);
    if (moved.has(messageId)) {
      report.transitioned.push(messageId);
      continue;
    }
    const state = found.get(messageId) ?? null;
    const reason: TransitionSkipReason =
      state === null
        ? 'not_found'
        : nextDeliveryState(state, event) === null
          ? 'state_not_allowed'
          : 'condition_unmet';
    report.skipped.push({ messageId, event, reason, found: state });
  }
  return report;
}

/** The skipped transitions counted by event and reason (for a metric of bounded labels). */
export function countSkipped(
  skipped: readonly SkippedTransition[],
): { event: DeliveryEvent; reason: TransitionSkipReason; count: number }[] {
  const counts = new Map<
    string,
    { event: DeliveryEvent; reason: TransitionSkipReason; count: number }
  >();
  for (const { event, reason } of skipped) {
    const key = `${event}/${reason}`;
    const entry = counts.get(key) ?? { event, reason, count: 0 };
    entry.count++;
    counts.set(key, entry);
  }
  return [...counts.values()];
}
