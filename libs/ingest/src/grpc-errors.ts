import { Metadata, status as GrpcStatus } from '@grpc/grpc-js';
import type { StatusObject } from '@grpc/grpc-js';
import { ErrorCode, RateLimitedError } from '@hookbase/domain';
import { toHttpError } from '@hookbase/web';

/**
 * The one place where error codes become gRPC statuses (HTTP's is libs/web/error-mapping.ts).
 * IDEMPOTENCY_CONFLICT is ALREADY_EXISTS: an event with that key exists, and retrying the same
 * request will not succeed (FAILED_PRECONDITION would suggest fixing the system state first).
 */
export function grpcStatusFor(code: ErrorCode): GrpcStatus {
  switch (code) {
    case 'VALIDATION_FAILED':
    case 'INVALID_JSON':
    case 'UNSUPPORTED_MEDIA_TYPE':
    case 'INVALID_URL':
    case 'URL_NOT_ALLOWED':
    case 'INVALID_SECRET':
    case 'FIFO_NOT_SUPPORTED':
    case 'FEATURE_NOT_AVAILABLE':
    case 'CREDENTIALS_REQUIRED':
    case 'CREDENTIALS_TARGET_CHANGED':
      return GrpcStatus.INVALID_ARGUMENT;
    case 'UNAUTHORIZED':
      return GrpcStatus.UNAUTHENTICATED;
    case 'FORBIDDEN':
    case 'PLAN_REQUIRED':
    case 'ENDPOINT_LIMIT_REACHED':
      return GrpcStatus.PERMISSION_DENIED;
    case 'NOT_FOUND':
    case 'ROUTE_NOT_FOUND':
    case 'ORGANIZATION_NOT_FOUND':
    case 'ENDPOINT_NOT_FOUND':
    case 'EVENT_NOT_FOUND':
    case 'MESSAGE_NOT_FOUND':
    case 'DLQ_ENTRY_NOT_FOUND':
    case 'API_KEY_NOT_FOUND':
      return GrpcStatus.NOT_FOUND;
    case 'IDEMPOTENCY_CONFLICT':
      return GrpcStatus.ALREADY_EXISTS;
    case 'ENDPOINT_NOT_POLLING':
    case 'API_KEY_REVOKED':
      return GrpcStatus.FAILED_PRECONDITION;
    case 'PAYLOAD_TOO_LARGE':
    case 'HEADERS_TOO_LARGE':
    case 'RATE_LIMITED':
      return GrpcStatus.RESOURCE_EXHAUSTED;
    case 'REQUEST_TIMEOUT':
      return GrpcStatus.DEADLINE_EXCEEDED;
    case 'SERVICE_UNAVAILABLE':
      return GrpcStatus.UNAVAILABLE;
    case 'INTERNAL':
      return GrpcStatus.INTERNAL;
    default: {
      const unreachable: never = code;
      throw new Error(`no gRPC status for ${String(unreachable)}`);
    }
  }
}

export const ERROR_CODE_METADATA = 'hookbase-error-code';
export const ERROR_DETAILS_METADATA = 'hookbase-error-details';
/** Seconds to wait before trying again, on RESOURCE_EXHAUSTED from a rate limit (as HTTP's). */
export const RETRY_AFTER_METADATA = 'retry-after';

/**
 * Anything thrown while serving a call, as a gRPC status: the Hookbase message as the status
 * message, the code (and details, as JSON, when there are any) in trailing metadata. Errors that
 * were not expected become INTERNAL without details; `unexpected` tells the caller to log them.
 */
export function toGrpcError(error: unknown): {
  status: Partial<StatusObject>;
  code: ErrorCode;
  message: string;
  unexpected: boolean;
} {
  const { body, unexpected } = toHttpError(error);
  const { code, message, details } = body.error;
  const metadata = new Metadata();
  metadata.set(ERROR_CODE_METADATA, code);
  if (details !== undefined && !unexpected) {
    metadata.set(ERROR_DETAILS_METADATA, asciiJson(details));
  }
  if (error instanceof RateLimitedError) {
    metadata.set(RETRY_AFTER_METADATA, String(error.retryAfterSeconds));
  }
  return {
    status: { code: grpcStatusFor(code), details: message, metadata },
    code,
    message,
    unexpected,
  };
}

/** JSON with every character outside printable ASCII escaped: metadata values allow no other. */
function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[^\x20-\x7e]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
