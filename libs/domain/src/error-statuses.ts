import type { ErrorCode } from './errors';

/**
 * The names of the gRPC status codes Hookbase answers with (as `@grpc/grpc-js` spells them in
 * its `status` enum); the gRPC edge turns a name into the number.
 */
export type GrpcStatusName =
  | 'INVALID_ARGUMENT'
  | 'UNAUTHENTICATED'
  | 'PERMISSION_DENIED'
  | 'NOT_FOUND'
  | 'ALREADY_EXISTS'
  | 'FAILED_PRECONDITION'
  | 'RESOURCE_EXHAUSTED'
  | 'DEADLINE_EXCEEDED'
  | 'UNAVAILABLE'
  | 'INTERNAL';

/**
 * The one table of what each error code means at the edges: its HTTP status and its gRPC
 * status. The HTTP edge (libs/web) and the gRPC edge (libs/ingest) each read it; neither depends
 * on the other. IDEMPOTENCY_CONFLICT is gRPC's ALREADY_EXISTS: an event with that key exists, and
 * retrying the same request will not succeed (FAILED_PRECONDITION would suggest fixing the
 * system state first).
 */
export const ERROR_STATUSES: Readonly<Record<ErrorCode, { http: number; grpc: GrpcStatusName }>> = {
  VALIDATION_FAILED: { http: 400, grpc: 'INVALID_ARGUMENT' },
  INVALID_JSON: { http: 400, grpc: 'INVALID_ARGUMENT' },
  UNSUPPORTED_MEDIA_TYPE: { http: 415, grpc: 'INVALID_ARGUMENT' },
  PAYLOAD_TOO_LARGE: { http: 413, grpc: 'RESOURCE_EXHAUSTED' },
  HEADERS_TOO_LARGE: { http: 431, grpc: 'RESOURCE_EXHAUSTED' },
  REQUEST_TIMEOUT: { http: 408, grpc: 'DEADLINE_EXCEEDED' },
  UNAUTHORIZED: { http: 401, grpc: 'UNAUTHENTICATED' },
  FORBIDDEN: { http: 403, grpc: 'PERMISSION_DENIED' },
  PLAN_REQUIRED: { http: 403, grpc: 'PERMISSION_DENIED' },
  NOT_FOUND: { http: 404, grpc: 'NOT_FOUND' },
  ROUTE_NOT_FOUND: { http: 404, grpc: 'NOT_FOUND' },
  ORGANIZATION_NOT_FOUND: { http: 404, grpc: 'NOT_FOUND' },
  ENDPOINT_NOT_FOUND: { http: 404, grpc: 'NOT_FOUND' },
  APPLICATION_NOT_FOUND: { http: 404, grpc: 'NOT_FOUND' },
  APPLICATION_UID_TAKEN: { http: 409, grpc: 'ALREADY_EXISTS' },
  PAYLOAD_PURGED: { http: 409, grpc: 'FAILED_PRECONDITION' },
  EVENT_NOT_FOUND: { http: 404, grpc: 'NOT_FOUND' },
  MESSAGE_NOT_FOUND: { http: 404, grpc: 'NOT_FOUND' },
  DLQ_ENTRY_NOT_FOUND: { http: 404, grpc: 'NOT_FOUND' },
  API_KEY_NOT_FOUND: { http: 404, grpc: 'NOT_FOUND' },
  API_KEY_REVOKED: { http: 409, grpc: 'FAILED_PRECONDITION' },
  ENDPOINT_LIMIT_REACHED: { http: 403, grpc: 'PERMISSION_DENIED' },
  IDEMPOTENCY_CONFLICT: { http: 409, grpc: 'ALREADY_EXISTS' },
  INVALID_URL: { http: 400, grpc: 'INVALID_ARGUMENT' },
  URL_NOT_ALLOWED: { http: 400, grpc: 'INVALID_ARGUMENT' },
  INVALID_SECRET: { http: 400, grpc: 'INVALID_ARGUMENT' },
  FIFO_NOT_SUPPORTED: { http: 400, grpc: 'INVALID_ARGUMENT' },
  FEATURE_NOT_AVAILABLE: { http: 400, grpc: 'INVALID_ARGUMENT' },
  CREDENTIALS_REQUIRED: { http: 400, grpc: 'INVALID_ARGUMENT' },
  CREDENTIALS_TARGET_CHANGED: { http: 400, grpc: 'INVALID_ARGUMENT' },
  ENDPOINT_NOT_POLLING: { http: 409, grpc: 'FAILED_PRECONDITION' },
  EVENT_TYPE_NOT_FOUND: { http: 404, grpc: 'NOT_FOUND' },
  EVENT_TYPE_EXISTS: { http: 409, grpc: 'ALREADY_EXISTS' },
  EVENT_TYPE_UNKNOWN: { http: 400, grpc: 'INVALID_ARGUMENT' },
  PAYLOAD_INVALID: { http: 400, grpc: 'INVALID_ARGUMENT' },
  SCHEMA_INVALID: { http: 400, grpc: 'INVALID_ARGUMENT' },
  EXAMPLE_INVALID: { http: 400, grpc: 'INVALID_ARGUMENT' },
  FILTER_INVALID: { http: 400, grpc: 'INVALID_ARGUMENT' },
  RATE_LIMITED: { http: 429, grpc: 'RESOURCE_EXHAUSTED' },
  SERVICE_UNAVAILABLE: { http: 503, grpc: 'UNAVAILABLE' },
  INTERNAL: { http: 500, grpc: 'INTERNAL' },
};

/** The HTTP status of an error code. */
export function httpStatusOf(code: ErrorCode): number {
  const statuses = ERROR_STATUSES[code];
  if (!statuses) throw new Error(`no HTTP status for ${String(code)}`);
  return statuses.http;
}

/** The name of the gRPC status of an error code. */
export function grpcStatusNameOf(code: ErrorCode): GrpcStatusName {
  const statuses = ERROR_STATUSES[code];
  if (!statuses) throw new Error(`no gRPC status for ${String(code)}`);
  return statuses.grpc;
}
