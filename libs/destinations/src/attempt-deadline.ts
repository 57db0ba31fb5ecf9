/** An abort signal that fires after a time, and a way to stand it down once the work is done. */
export interface AttemptDeadline {
  signal: AbortSignal;
  /** The work finished: the timer is cleared now, not left to fire (or wait for collection). */
  clear(): void;
}

/**
 * Like `AbortSignal.timeout(ms)` (it aborts with the same `TimeoutError`), but cleared when the
 * attempt ends. `AbortSignal.timeout`'s timer lives until it fires or its signal is collected,
 * so at thousands of attempts a second the process carried one per attempt of the last
 * timeout's worth, and each fired with a `DOMException` built for nothing.
 */
export function attemptDeadline(ms: number): AttemptDeadline {
  const controller = new AbortController();
  const timer = setTimeout(
    () =>
      controller.abort(
        new DOMException('The operation was aborted due to timeout', 'TimeoutError'),
      ),
    ms,
  );
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}
