import { DomainError } from '@hookbase/domain';
import { httpStatusFor, toHttpError } from './error-mapping';

describe('toHttpError', () => {
  it('maps domain errors by code, keeping details', () => {
    const mapped = toHttpError(new DomainError('VALIDATION_FAILED', 'bad', { issues: [] }));
    expect(mapped.status).toBe(400);
    expect(mapped.body).toEqual({
      error: { code: 'VALIDATION_FAILED', message: 'bad', details: { issues: [] } },
    });
  });

  it.each([
    [{ code: 'FST_ERR_CTP_BODY_TOO_LARGE', statusCode: 413 }, 413, 'PAYLOAD_TOO_LARGE'],
    [{ code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE', statusCode: 415 }, 415, 'UNSUPPORTED_MEDIA_TYPE'],
    [{ code: 'FST_ERR_CTP_EMPTY_JSON_BODY', statusCode: 400 }, 400, 'INVALID_JSON'],
    [{ code: 'FST_ERR_MAX_PARAM_LENGTH', statusCode: 414 }, 400, 'VALIDATION_FAILED'],
    [{ code: 'FST_ERR_BAD_URL', statusCode: 400 }, 400, 'VALIDATION_FAILED'],
    [{ name: 'SyntaxError', statusCode: 400, message: 'Unexpected token' }, 400, 'INVALID_JSON'],
    [{ name: 'NotFoundException', status: 404 }, 404, 'ROUTE_NOT_FOUND'],
    [{ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' }, 503, 'SERVICE_UNAVAILABLE'],
    [{ name: 'QueryFailedError', driverError: { code: '57P01' } }, 503, 'SERVICE_UNAVAILABLE'],
  ])('maps framework error %j to %i %s', (error, status, code) => {
    const mapped = toHttpError(error);
    expect(mapped.status).toBe(status);
    expect(mapped.body.error.code).toBe(code);
    expect(mapped.unexpected).toBe(false);
  });

  it('hides unexpected errors behind INTERNAL', () => {
    const mapped = toHttpError(new TypeError('secret detail'));
    expect(mapped).toEqual({
      status: 500,
      body: { error: { code: 'INTERNAL', message: 'Internal error' } },
      unexpected: true,
    });
  });
});

describe('httpStatusFor', () => {
  it.each([
    ['UNAUTHORIZED', 401],
    ['PLAN_REQUIRED', 403],
    ['ENDPOINT_NOT_FOUND', 404],
    ['IDEMPOTENCY_CONFLICT', 409],
    ['ENDPOINT_NOT_POLLING', 409],
    ['SERVICE_UNAVAILABLE', 503],
  ] as const)('%s is %i', (code, status) => {
    expect(httpStatusFor(code)).toBe(status);
  });
});
