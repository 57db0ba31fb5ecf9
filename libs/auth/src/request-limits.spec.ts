import { loadConfig } from '@hookbase/config';
import { RateLimitedError } from '@hookbase/domain';
import { LimitedPrincipal, RefusalCounter, RequestLimits } from './request-limits';

function setup() {
  const config = loadConfig({
    HOOKBASE_MAX_BATCH_EVENTS: '10',
    HOOKBASE_INGEST_EVENTS_PER_SECOND_FREE: '10',
    HOOKBASE_INGEST_EVENTS_PER_SECOND_PRO: '30',
    HOOKBASE_API_REQUESTS_PER_SECOND_FREE: '2',
    HOOKBASE_REPLAY_FAILED_PER_MINUTE: '5',
  });
  const refusals = new RefusalCounter();
  return { limits: new RequestLimits(config, refusals), refusals };
}

const free: LimitedPrincipal = { keyId: 'key_free', organizationId: 'org_f', plan: 'free' };
const pro: LimitedPrincipal = { keyId: 'key_pro', organizationId: 'org_p', plan: 'pro' };

async function refused(promise: Promise<unknown>): Promise<RateLimitedError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof RateLimitedError) return error;
    throw error;
  }
  throw new Error('expected a RateLimitedError');
}

/*
 * Windows are one second long and start at a key's first request, so every step of a test here
 * runs well within one window.
 */
describe('RequestLimits', () => {
  it('takes events per key and plan; a refused batch keeps the budget it did not use', async () => {
    const { limits, refusals } = setup();
    await limits.takeIngest(free, 8);
    const error = await refused(limits.takeIngest(free, 5));
    expect(error.code).toBe('RATE_LIMITED');
    expect(error.retryAfterSeconds).toBe(1);
    expect(error.details).toEqual({ limit: 'ingest', retryAfterSeconds: 1 });
    await limits.takeIngest(free, 2); // the refused 5 were given back
    await limits.takeIngest(pro, 10);
    await limits.takeIngest(pro, 10);
    await limits.takeIngest({ ...free, keyId: 'key_other' }, 10); // each key has its own
    expect(refusals.snapshot()).toEqual({
      auth_failures: 0,
      ingest: 1,
      management: 0,
      replay_failed: 0,
    });
  });

  it('takes one management request per call', async () => {
    const { limits, refusals } = setup();
    await limits.takeManagement(free);
    await limits.takeManagement(free);
    expect((await refused(limits.takeManagement(free))).details).toMatchObject({
      limit: 'management',
    });
    expect(refusals.snapshot().management).toBe(1);
  });

  it('grants replay copies up to what is left of the minute, and refuses when none is', async () => {
    const { limits, refusals } = setup();
    expect(await limits.takeReplayFailed('org_r', 3)).toBe(3);
    expect(await limits.takeReplayFailed('org_r', 3)).toBe(2);
    const error = await refused(limits.takeReplayFailed('org_r', 3));
    expect(error.retryAfterSeconds).toBeGreaterThan(1);
    expect(error.retryAfterSeconds).toBeLessThanOrEqual(60);
    await limits.giveBackReplayFailed('org_r', 2);
    expect(await limits.takeReplayFailed('org_r', 3)).toBe(2);
    expect(await limits.takeReplayFailed('org_other', 3)).toBe(3);
    expect(refusals.snapshot().replay_failed).toBe(1);
  });
});
