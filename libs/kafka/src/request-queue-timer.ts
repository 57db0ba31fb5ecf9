/**
 * kafkajs 2.2.4 (its last release) keeps a per-connection timer that re-checks the queue of
 * requests held back by client-side throttling. It arms that timer `throttledUntil - Date.now()` ms
 * ahead even when nothing is queued, and `throttledUntil` starts at -1, so the delay is a large
 * negative number: Node runs it after 1 ms, the check finds nothing, and arms it again. Every broker
 * connection so wakes its process about 800 times a second for nothing, and on Node 23+ each
 * process also prints `TimeoutNegativeWarning` (kafkajs issue 1751, not fixed upstream).
 *
 * This replaces that one method: a check is armed only while requests are queued, at the end of the
 * throttle if one is in force, else after kafkajs's own 10 ms. A request that is queued arms it
 * (kafkajs's `push`), and every response or timeout re-checks the queue at once, as before.
 */

// kafkajs's request queue (not part of its typed API): only the fields this method reads.
interface RequestQueue {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

/** kafkajs's CHECK_PENDING_REQUESTS_INTERVAL: how soon a queue held back by in-flight limits is re-checked. */
export const PENDING_RECHECK_MS = 10;

/** The delay before the next check of a queue, or undefined when none is needed (nothing queued). */
export function pendingCheckDelay(
  pending: number,
  throttledUntil: number,
  now: number,
): number | undefined {
  if (pending === 0) return undefined;
  const untilThrottleEnds = throttledUntil - now;
  return untilThrottleEnds > 0 ? untilThrottleEnds : PENDING_RECHECK_MS;
}

function scheduleCheckPendingRequests(this: RequestQueue): void {
  if (this.throttleCheckTimeoutId) return;
  const delay = pendingCheckDelay(this.pending.length, this.throttledUntil, Date.now());
  if (delay === undefined) return;
  this.throttleCheckTimeoutId = setTimeout(() => {
    this.throttleCheckTimeoutId = null;
    this.checkPendingRequests();
  }, delay);
}

/** Installs the method on kafkajs's request queue (this process's copy of kafkajs); idempotent. */
export function fixKafkajsRequestQueueTimer(): void {
  type RequestQueueClass = { prototype: RequestQueue };
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const RequestQueueClass: RequestQueueClass = require('kafkajs/src/network/requestQueue');
  RequestQueueClass.prototype.scheduleCheckPendingRequests = scheduleCheckPendingRequests;
}

fixKafkajsRequestQueueTimer();
