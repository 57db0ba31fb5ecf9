import { DomainError, ErrorCode, httpStatusOf } from '@hookbase/domain';
import { CodedError, codedError, isStoreUnavailable } from '@hookbase/runtime';

/** An error code's HTTP status, from the domain's table of statuses (`ERROR_STATUSES`). */
export function httpStatusFor(code: ErrorCode): number {
  return httpStatusOf(code);
}

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: unknown };
}

interface FrameworkError {
  code?: string;
  statusCode?: number;
  status?: number;
  message?: string;
  name?: string;
}

/** The longest path parameter the router takes; every id Hookbase issues is far shorter. */
export const MAX_PATH_PARAM_LENGTH = 200;

/**
 * Turns anything thrown while serving a request into a status and a coded body. Errors raised by
 * the HTTP stack itself (body parsing, size limits, unknown routes) get codes too, so a client
 * never sees an uncoded error.
 */
export function toHttpError(error: unknown): {
  status: number;
  body: ErrorBody;
  unexpected: boolean;
} {
  const coded =
    error instanceof DomainError || isStoreUnavailable(error)
      ? codedError(error)
      : (frameworkError((error ?? {}) as FrameworkError) ?? codedError(error));
  const body: ErrorBody = { error: { code: coded.code, message: coded.message } };
  if (coded.details !== undefined) body.error.details = coded.details;
  return { status: httpStatusFor(coded.code), body, unexpected: coded.unexpected };
}

/** What the HTTP stack itself throws (body parsing, size limits, routing), coded; else null. */
function frameworkError(framework: FrameworkError): CodedError | null {
  const status = framework.statusCode ?? framework.status;
  const known = (code: ErrorCode, message: string): CodedError => ({
    code,
    message,
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
  if (status === 404 || framework.name === 'NotFoundException') {
    return known('ROUTE_NOT_FOUND', 'No such route');
  }
  if (status === 413) return known('PAYLOAD_TOO_LARGE', 'Request body is larger than the limit');
  if (status === 415) return known('UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json');
  if (status !== undefined && status >= 400 && status < 500) {
    return known('VALIDATION_FAILED', framework.message ?? 'Bad request');
  }
  return null;
}
