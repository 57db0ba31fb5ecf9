/**
 * A non-FIFO endpoint that answers in time but slower than its messages come builds a backlog in
 * the dispatcher: its messages wait in its line for one of its concurrency slots, inside their
 * partition's read-ahead window. Left there, the backlog would fill the window and the whole
 * partition would be read only as fast as that one endpoint drains. So a message that has waited
 * long enough behind the endpoint's own attempts is handed back to the retry schedule (held, no
 * attempt used) until about when the endpoint has drained what is ahead of it. These are the
 * rules; the dispatcher's `EndpointLine` keeps the state.
 */

/** Longest a message is handed back for at once; one still behind a backlog comes, then goes again. */
export const BACKLOG_RETURN_MAX_MS = 60_000;

/** Weight of the newest attempt in an endpoint's mean attempt duration. */
const MEAN_WEIGHT = 0.2;

/** How an endpoint drains, as its dispatcher has seen it. */
export interface EndpointDrain {
  /** Attempts it may have in flight at once. */
  concurrency: number;
  /** Mean duration of its finished attempts (ms); null before the first one finished. */
  meanAttemptMs: number | null;
  /** Age of its oldest attempt in flight (ms); 0 when none is. */
  oldestAttemptMs: number;
}

/** The mean attempt duration after one more attempt that took `tookMs` (a moving average). */
export function meanAttemptAfter(meanMs: number | null, tookMs: number): number {
  const took = Math.max(0, tookMs);
  return meanMs === null ? took : meanMs + MEAN_WEIGHT * (took - meanMs);
}

/**
 * The time the endpoint takes per message, on average: an attempt's duration over its
 * concurrency. An attempt in flight for longer than the mean counts as that long (before the
 * first attempt finished, it is all there is to go by); never less than 1 ms per attempt.
 */
export function drainIntervalMs(drain: EndpointDrain): number {
  const attemptMs = Math.max(drain.meanAttemptMs ?? 0, drain.oldestAttemptMs, 1);
  return attemptMs / Math.max(1, drain.concurrency);
}

/**
 * Is a message that waited `waitedMs` in its endpoint's line to be handed back now? Only once it
 * waited `maxWaitMs`, and only while every one of the endpoint's slots is in an attempt: a line
 * that waits because its messages wait for the dispatcher's pool is not the endpoint's doing.
 */
export function handBackDue(
  waitedMs: number,
  maxWaitMs: number,
  attemptsInFlight: number,
  concurrency: number,
): boolean {
  return waitedMs >= maxWaitMs && attemptsInFlight >= concurrency;
}

/** When a handed-back message comes again, and the endpoint's reservation after it. */
export interface BacklogReturn {
  at: number;
  reservedUntil: number;
}

/**
 * When a message handed back at `now` comes again: once the endpoint has drained the `ahead`
 * messages before it (its attempts in flight and the messages still waiting in its line), and
 * after the messages handed back before it (the endpoint's reservation `reservedUntil`, which
 * spaces them at its drain interval), but never later than BACKLOG_RETURN_MAX_MS from now.
 */
export function backlogReturn(
  now: number,
  ahead: number,
  intervalMs: number,
  reservedUntil: number,
): BacklogReturn {
  const afterAhead = now + (Math.max(0, ahead) + 1) * intervalMs;
  const afterReserved = reservedUntil + intervalMs;
  const at = Math.min(Math.max(afterAhead, afterReserved), now + BACKLOG_RETURN_MAX_MS);
  return { at, reservedUntil: at };
}
