export interface PollOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** Said in the error when time runs out, with the last value seen. */
  description: string;
}

/**
 * Calls `probe` until it returns something other than undefined/false/null, and returns that.
 * Fails with the description and the last value seen when the time runs out: tests wait for a
 * condition, never for a fixed time.
 */
export async function pollUntil<T>(
  probe: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  { timeoutMs = 30_000, intervalMs = 100, description }: PollOptions,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      last = value;
      if (value !== undefined && value !== null && value !== false) return value as T;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const detail = lastError ? ` (last error: ${(lastError as Error).message})` : '';
      throw new Error(
        `Timed out after ${timeoutMs} ms waiting for ${description}; last value: ${JSON.stringify(last)}${detail}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
