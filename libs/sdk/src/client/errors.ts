/** An error answer of the Hookbase API: `{ error: { code, message, details? } }` with its status. */
export class HookbaseApiError extends Error {
  override readonly name = 'HookbaseApiError';

  constructor(
    /** The HTTP status (400 validation, 401, 403, 404, 409, 413, 429, 503 ...). */
    readonly status: number,
    /** The API's error code, e.g. `VALIDATION_FAILED`, `IDEMPOTENCY_CONFLICT`, `PLAN_REQUIRED`. */
    readonly code: string,
    message: string,
    readonly details?: unknown,
    /** Seconds the server asked to wait (`Retry-After`), when it said. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

/**
 * The API could not be reached (connection refused or reset, DNS, timeout) or answered something
 * that is not the API's JSON. `code` is `NETWORK_ERROR`, `TIMEOUT` or `INVALID_RESPONSE`.
 */
export class HookbaseConnectionError extends Error {
  override readonly name = 'HookbaseConnectionError';

  constructor(
    readonly code: 'NETWORK_ERROR' | 'TIMEOUT' | 'INVALID_RESPONSE',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** `Retry-After` in seconds (delta-seconds or an HTTP date), or undefined when absent or unreadable. */
export function parseRetryAfter(
  value: string | null | undefined,
  now = Date.now(),
): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, (date - now) / 1000);
}

/** The typed error for an API answer that is not a success. */
export function apiErrorFrom(response: Response, body: unknown): HookbaseApiError {
  const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
  const error =
    typeof body === 'object' && body !== null && 'error' in body
      ? (body as { error: unknown }).error
      : undefined;
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const { code, message, details } = error as {
      code: unknown;
      message?: unknown;
      details?: unknown;
    };
    return new HookbaseApiError(
      response.status,
      String(code),
      typeof message === 'string' ? message : `HTTP ${response.status}`,
      details,
      retryAfter,
    );
  }
  return new HookbaseApiError(
    response.status,
    `HTTP_${response.status}`,
    `HTTP ${response.status} ${response.statusText}`.trim(),
    typeof body === 'string' && body ? { body: body.slice(0, 500) } : undefined,
    retryAfter,
  );
}
