import type { AttemptOutcome } from '@hookbase/domain';
import {
  asShape,
  errorText,
  isNetworkFailure,
  isTimeout,
  networkText,
  stringField,
} from './transport-errors';

/**
 * How a Google Cloud client error (google-gax over gRPC, google-auth-library over HTTP) becomes an
 * attempt outcome. Pure. gRPC status codes: unavailable, deadline exceeded, resource exhausted,
 * aborted, internal and unknown retry; invalid argument, not found, permission denied,
 * unauthenticated and the other "this will not change" codes fail. An error we cannot place is
 * retried (the schedule and max age bound it).
 */
export type GoogleErrorOutcome = Exclude<AttemptOutcome, { kind: 'succeeded' }>;

/** gRPC status codes (https://grpc.github.io/grpc/core/md_doc_statuscodes.html). */
export const GRPC_STATUS = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;

const GRPC_NAMES: Record<number, string> = Object.fromEntries(
  Object.entries(GRPC_STATUS).map(([name, code]) => [code, name]),
);

export const GRPC_RETRYABLE: ReadonlySet<number> = new Set([
  GRPC_STATUS.CANCELLED,
  GRPC_STATUS.UNKNOWN,
  GRPC_STATUS.DEADLINE_EXCEEDED,
  GRPC_STATUS.RESOURCE_EXHAUSTED,
  GRPC_STATUS.ABORTED,
  GRPC_STATUS.INTERNAL,
  GRPC_STATUS.UNAVAILABLE,
]);

export const GRPC_PERMANENT: ReadonlySet<number> = new Set([
  GRPC_STATUS.INVALID_ARGUMENT,
  GRPC_STATUS.NOT_FOUND,
  GRPC_STATUS.ALREADY_EXISTS,
  GRPC_STATUS.PERMISSION_DENIED,
  GRPC_STATUS.FAILED_PRECONDITION,
  GRPC_STATUS.OUT_OF_RANGE,
  GRPC_STATUS.UNIMPLEMENTED,
  GRPC_STATUS.DATA_LOSS,
  GRPC_STATUS.UNAUTHENTICATED,
]);

const RETRYABLE_HTTP: ReadonlySet<number> = new Set([408, 425, 429]);

interface GoogleErrorShape {
  code?: unknown;
  status?: unknown;
  message?: unknown;
  response?: { status?: unknown } | null;
}

export function classifyGoogleError(error: unknown): GoogleErrorOutcome {
  const shape = asShape(error) as GoogleErrorShape;
  const message = errorText(
    stringField(shape.message) ?? (typeof error === 'string' ? error : 'unknown error'),
  );
  // gRPC: a numeric status code.
  if (typeof shape.code === 'number' && shape.code in GRPC_NAMES) {
    const name = GRPC_NAMES[shape.code];
    const text = errorText(message.includes(name) ? message : `${name}: ${message}`);
    if (shape.code === GRPC_STATUS.DEADLINE_EXCEEDED) return { kind: 'retry', error: 'timeout' };
    if (GRPC_PERMANENT.has(shape.code)) return { kind: 'failed', error: text };
    return { kind: 'retry', error: text };
  }
  // HTTP (the token endpoint, REST fallback): the response status.
  const status =
    typeof shape.response?.status === 'number'
      ? shape.response.status
      : typeof shape.status === 'number'
        ? shape.status
        : undefined;
  if (status !== undefined && Number.isInteger(status) && status >= 300) {
    const text = errorText(`HTTP ${status}: ${message}`);
    if (status >= 500 || RETRYABLE_HTTP.has(status)) return { kind: 'retry', status, error: text };
    return { kind: 'failed', status, error: text };
  }
  if (isTimeout(error)) return { kind: 'retry', error: 'timeout' };
  if (isNetworkFailure(error)) return { kind: 'retry', error: networkText(error) };
  // google-auth-library found no credentials at all: a configuration problem, not a moment.
  if (/could not load the default credentials/i.test(message)) {
    return { kind: 'failed', error: message };
  }
  return { kind: 'retry', error: message };
}
