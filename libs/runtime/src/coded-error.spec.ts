import { DomainError, RateLimitedError } from '@hookbase/domain';
import { codedError, isStoreUnavailable } from './coded-error';

describe('codedError', () => {
  it('keeps a Hookbase error as it is, details included only when there are some', () => {
    expect(codedError(new DomainError('VALIDATION_FAILED', 'bad', { issues: [] }))).toEqual({
      code: 'VALIDATION_FAILED',
      message: 'bad',
      details: { issues: [] },
      unexpected: false,
    });
    expect(codedError(new DomainError('NOT_FOUND', 'gone'))).toEqual({
      code: 'NOT_FOUND',
      message: 'gone',
      unexpected: false,
    });
    expect(codedError(new RateLimitedError('slow down', 3, { limit: 'key' }))).toMatchObject({
      code: 'RATE_LIMITED',
      details: { limit: 'key', retryAfterSeconds: 3 },
    });
  });

  it.each([
    [{ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' }],
    [{ name: 'QueryFailedError', driverError: { code: '57P01' } }],
    [{ code: '08006' }],
  ])('calls an unreachable store %j SERVICE_UNAVAILABLE', (error) => {
    expect(isStoreUnavailable(error)).toBe(true);
    expect(codedError(error)).toEqual({
      code: 'SERVICE_UNAVAILABLE',
      message: 'A backing store is unavailable; retry shortly',
      unexpected: false,
    });
  });

  it('hides anything else behind INTERNAL', () => {
    for (const error of [new TypeError('secret detail'), { code: '23505' }, null, undefined, 7]) {
      expect(isStoreUnavailable(error)).toBe(false);
      expect(codedError(error)).toEqual({
        code: 'INTERNAL',
        message: 'Internal error',
        unexpected: true,
      });
    }
  });
});
