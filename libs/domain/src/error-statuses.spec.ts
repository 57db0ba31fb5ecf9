import { ERROR_STATUSES, grpcStatusNameOf, httpStatusOf } from './error-statuses';
import type { ErrorCode } from './errors';

describe('error statuses', () => {
  it('give every code an HTTP status and a gRPC status', () => {
    for (const [code, { http, grpc }] of Object.entries(ERROR_STATUSES)) {
      expect(httpStatusOf(code as ErrorCode)).toBe(http);
      expect(grpcStatusNameOf(code as ErrorCode)).toBe(grpc);
      expect(http).toBeGreaterThanOrEqual(400);
      expect(http).toBeLessThan(600);
    }
    expect(Object.keys(ERROR_STATUSES)).toHaveLength(41);
  });

  it.each([
    ['VALIDATION_FAILED', 400, 'INVALID_ARGUMENT'],
    ['UNSUPPORTED_MEDIA_TYPE', 415, 'INVALID_ARGUMENT'],
    ['UNAUTHORIZED', 401, 'UNAUTHENTICATED'],
    ['PLAN_REQUIRED', 403, 'PERMISSION_DENIED'],
    ['ENDPOINT_NOT_FOUND', 404, 'NOT_FOUND'],
    ['IDEMPOTENCY_CONFLICT', 409, 'ALREADY_EXISTS'],
    ['APPLICATION_NOT_FOUND', 404, 'NOT_FOUND'],
    ['APPLICATION_UID_TAKEN', 409, 'ALREADY_EXISTS'],
    ['PAYLOAD_PURGED', 409, 'FAILED_PRECONDITION'],
    ['ENDPOINT_NOT_POLLING', 409, 'FAILED_PRECONDITION'],
    ['REQUEST_TIMEOUT', 408, 'DEADLINE_EXCEEDED'],
    ['HEADERS_TOO_LARGE', 431, 'RESOURCE_EXHAUSTED'],
    ['RATE_LIMITED', 429, 'RESOURCE_EXHAUSTED'],
    ['SERVICE_UNAVAILABLE', 503, 'UNAVAILABLE'],
    ['INTERNAL', 500, 'INTERNAL'],
  ] as const)('%s is HTTP %i and gRPC %s', (code, http, grpc) => {
    expect(httpStatusOf(code)).toBe(http);
    expect(grpcStatusNameOf(code)).toBe(grpc);
  });

  it('refuses a code it does not know', () => {
    expect(() => httpStatusOf('NOPE' as ErrorCode)).toThrow(/no HTTP status for NOPE/);
    expect(() => grpcStatusNameOf('NOPE' as ErrorCode)).toThrow(/no gRPC status for NOPE/);
  });
});
