import { Metadata, status as GrpcStatus } from '@grpc/grpc-js';
import type { StatusObject } from '@grpc/grpc-js';
import { ErrorCode, grpcStatusNameOf, RateLimitedError } from '@hookbase/domain';
import { codedError } from '@hookbase/runtime';

/**
 * An error code's gRPC status, from the domain's table of statuses (`ERROR_STATUSES`), which the
 * HTTP edge reads too.
 */
export function grpcStatusFor(code: ErrorCode): GrpcStatus {
  return GrpcStatus[grpcStatusNameOf(code)];
}

export const ERROR_CODE_METADATA = 'hookbase-error-code';
export const ERROR_DETAILS_METADATA = 'hookbase-error-details';
/** Seconds to wait before trying again, on RESOURCE_EXHAUSTED (a rate limit) and UNAVAILABLE. */
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
  /** The error's details, when it has any and was expected. */
  details?: unknown;
  unexpected: boolean;
} {
  const { code, message, details, unexpected } = codedError(error);
  const metadata = new Metadata();
  metadata.set(ERROR_CODE_METADATA, code);
  if (details !== undefined && !unexpected) {
    metadata.set(ERROR_DETAILS_METADATA, asciiJson(details));
  }
  if (error instanceof RateLimitedError) {
    metadata.set(RETRY_AFTER_METADATA, String(error.retryAfterSeconds));
  } else if (code === 'SERVICE_UNAVAILABLE') {
    // As HTTP's 503: try again in a second.
    metadata.set(RETRY_AFTER_METADATA, '1');
  }
  return {
    status: { code: grpcStatusFor(code), details: message, metadata },
    code,
    message,
    ...(details !== undefined && !unexpected ? { details } : {}),
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
