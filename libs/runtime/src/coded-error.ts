import { DomainError, ErrorCode } from '@hookbase/domain';

/**
 * Anything thrown while serving a call, as what a client is told: a code, a message, details when
 * there are any. The edges (HTTP in libs/web, gRPC in libs/ingest) turn the code into their status
 * through the domain's table (`ERROR_STATUSES`).
 */
export interface CodedError {
  code: ErrorCode;
  message: string;
  details?: unknown;
  /** Not an error Hookbase expected: the client sees INTERNAL without details; log it. */
  unexpected: boolean;
}

// Connection failures of PostgreSQL (socket errors and SQLSTATE classes 08 and 57P) mean "not
// now", not "broken": the client should retry.
const STORE_UNAVAILABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  '08000',
  '08001',
  '08003',
  '08006',
  '57P01',
  '57P02',
  '57P03',
]);

/** Whether `error` says a backing store (PostgreSQL) could not be reached. */
export function isStoreUnavailable(error: unknown): boolean {
  const thrown = (error ?? {}) as { code?: unknown; driverError?: { code?: unknown } };
  const code = thrown.driverError?.code ?? thrown.code;
  return typeof code === 'string' && STORE_UNAVAILABLE.has(code);
}

/**
 * A Hookbase error keeps its code, message and details; a store that cannot be reached is
 * SERVICE_UNAVAILABLE; anything else is INTERNAL, unexpected, and says nothing of itself.
 */
export function codedError(error: unknown): CodedError {
  if (error instanceof DomainError) {
    const coded: CodedError = { code: error.code, message: error.message, unexpected: false };
    if (error.details !== undefined) coded.details = error.details;
    return coded;
  }
  if (isStoreUnavailable(error)) {
    return {
      code: 'SERVICE_UNAVAILABLE',
      message: 'A backing store is unavailable; retry shortly',
      unexpected: false,
    };
  }
  return { code: 'INTERNAL', message: 'Internal error', unexpected: true };
}
