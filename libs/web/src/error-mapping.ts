import { DomainError, ErrorCode } from '@hookbase/domain';

/** The one place where error codes become HTTP statuses. */
export function httpStatusFor(code: ErrorCode): number {
  switch (code) {
    case 'VALIDATION_FAILED':
    case 'INVALID_JSON':
    case 'INVALID_URL':
    case 'URL_NOT_ALLOWED':
    case 'INVALID_SECRET':
    case 'FIFO_NOT_SUPPORTED':
    case 'FEATURE_NOT_AVAILABLE':
    case 'CREDENTIALS_REQUIRED':
    case 'CREDENTIALS_TARGET_CHANGED':
      return 400;
    case 'UNAUTHORIZED':
      return 401;
    case 'FORBIDDEN':
    case 'PLAN_REQUIRED':
    case 'ENDPOINT_LIMIT_REACHED':
      return 403;
    case 'NOT_FOUND':
    case 'ROUTE_NOT_FOUND':
    case 'ORGANIZATION_NOT_FOUND':
    case 'ENDPOINT_NOT_FOUND':
    case 'EVENT_NOT_FOUND':
    case 'MESSAGE_NOT_FOUND':
    case 'DLQ_ENTRY_NOT_FOUND':
    case 'API_KEY_NOT_FOUND':
      return 404;
    case 'IDEMPOTENCY_CONFLICT':
    case 'ENDPOINT_NOT_POLLING':
    case 'API_KEY_REVOKED':
      return 409;
    case 'REQUEST_TIMEOUT':
      return 408;
    case 'PAYLOAD_TOO_LARGE':
      return 413;
    case 'HEADERS_TOO_LARGE':
      return 431;
    case 'UNSUPPORTED_MEDIA_TYPE':
      return 415;
    case 'RATE_LIMITED':
      return 429;
    case 'SERVICE_UNAVAILABLE':
      return 503;
    case 'INTERNAL':
      return 500;
    default: {
      const unreachable: never = code;
      throw new Error(`no HTTP status for ${String(unreachable)}`);
    }
  }
}

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: unknown };
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

interface FrameworkError {
  code?: string;
  statusCode?: number;
  status?: number;
  message?: string;
  name?: string;
  driverError?: { code?: string };
}

/**
 * Turns anything thrown while serving a request into a status and a coded body. Errors raised by
 * the HTTP stack itself (body parsing, size limits, unknown routes) get codes too, so a client
 * never sees an uncoded error.
 */
/** The longest path parameter the router takes; every id Hookbase issues is far shorter. */
export const MAX_PATH_PARAM_LENGTH = 200;

export function toHttpError(error: unknown): {
  status: number;
  body: ErrorBody;
  unexpected: boolean;
} {
  if (error instanceof DomainError) {
    const body: ErrorBody = { error: { code: error.code, message: error.message } };
    if (error.details !== undefined) body.error.details = error.details;
    return { status: httpStatusFor(error.code), body, unexpected: false };
  }
  const framework = (error ?? {}) as FrameworkError;
  const status = framework.statusCode ?? framework.status;
  const known = (code: ErrorCode, message: string) => ({
    status: httpStatusFor(code),
    body: { error: { code, message } },
    unexpected: false,
  });
  switch (framework.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return known('PAYLOAD_TOO_LARGE', 'Request body is larger than the limit');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return known('UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return known('INVALID_JSON', 'Body is empty but content-type is application/json');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return known('INVALID_JSON', 'Body is not valid JSON');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return known(
        'VALIDATION_FAILED',
        `A path parameter is longer than ${MAX_PATH_PARAM_LENGTH} characters: no id is that long`,
      );
    case 'FST_ERR_BAD_URL':
      return known('VALIDATION_FAILED', 'The request path is not a valid URL path');
  }
  if (framework.name === 'SyntaxError' && status === 400) {
    return known('INVALID_JSON', `Body is not valid JSON: ${framework.message ?? ''}`.trim());
  }
  const storeCode = framework.driverError?.code ?? framework.code;
  if (storeCode && STORE_UNAVAILABLE.has(storeCode)) {
    return known('SERVICE_UNAVAILABLE', 'A backing store is unavailable; retry shortly');
  }
  if (status === 404 || framework.name === 'NotFoundException') {
    return known('ROUTE_NOT_FOUND', 'No such route');
  }
  if (status === 413) return known('PAYLOAD_TOO_LARGE', 'Request body is larger than the limit');
  if (status === 415) return known('UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json');
  if (status !== undefined && status >= 400 && status < 500) {
    return known('VALIDATION_FAILED', framework.message ?? 'Bad request');
  }
  return {
    status: 500,
    body: { error: { code: 'INTERNAL', message: 'Internal error' } },
    unexpected: true,
  };
}
