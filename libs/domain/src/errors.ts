/**
 * Every error Hookbase reports carries a code. Domain code throws these; the edge (HTTP, gRPC)
 * maps codes to statuses once, from the table in error-statuses.ts.
 */
export type ErrorCode =
  | 'VALIDATION_FAILED'
  | 'INVALID_JSON'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'PAYLOAD_TOO_LARGE'
  | 'HEADERS_TOO_LARGE'
  | 'REQUEST_TIMEOUT'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'PLAN_REQUIRED'
  | 'NOT_FOUND'
  | 'ROUTE_NOT_FOUND'
  | 'ORGANIZATION_NOT_FOUND'
  | 'ENDPOINT_NOT_FOUND'
  | 'APPLICATION_NOT_FOUND'
  | 'APPLICATION_UID_TAKEN'
  | 'PAYLOAD_PURGED'
  | 'EVENT_NOT_FOUND'
  | 'MESSAGE_NOT_FOUND'
  | 'DLQ_ENTRY_NOT_FOUND'
  | 'API_KEY_NOT_FOUND'
  | 'API_KEY_REVOKED'
  | 'ENDPOINT_LIMIT_REACHED'
  | 'IDEMPOTENCY_CONFLICT'
  | 'INVALID_URL'
  | 'URL_NOT_ALLOWED'
  | 'INVALID_SECRET'
  | 'FIFO_NOT_SUPPORTED'
  | 'FEATURE_NOT_AVAILABLE'
  | 'CREDENTIALS_REQUIRED'
  | 'CREDENTIALS_TARGET_CHANGED'
  | 'ENDPOINT_NOT_POLLING'
  | 'EVENT_TYPE_NOT_FOUND'
  | 'EVENT_TYPE_EXISTS'
  | 'EVENT_TYPE_UNKNOWN'
  | 'PAYLOAD_INVALID'
  | 'SCHEMA_INVALID'
  | 'EXAMPLE_INVALID'
  | 'FILTER_INVALID'
  | 'RATE_LIMITED'
  | 'SERVICE_UNAVAILABLE'
  | 'INTERNAL';

export class DomainError extends Error {
  constructor(
    public readonly code: ErrorCode,
    message: string,
    public readonly details?: unknown,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

/**
 * A request refused by a rate limit or quota: 429 RATE_LIMITED, and the edge tells the client when
 * to try again (HTTP `Retry-After`, gRPC `retry-after` trailing metadata), in whole seconds.
 */
export class RateLimitedError extends DomainError {
  constructor(
    message: string,
    public readonly retryAfterSeconds: number,
    details: { limit: string },
  ) {
    super('RATE_LIMITED', message, { ...details, retryAfterSeconds });
    this.name = 'RateLimitedError';
  }
}
