import { randomBytes } from 'node:crypto';
import { loadConfig } from '@hookbase/config';
import { DomainError, RateLimitedError } from '@hookbase/domain';
import { ActiveApiKey, ActivePortalToken, hashApiKey } from '@hookbase/persistence';
import { ApiKeyLookup, AuthService, PortalTokenLookup, readBearer } from './auth.service';
import { RefusalCounter, RequestLimits } from './request-limits';

const newKey = () => `hb_${randomBytes(32).toString('base64url')}`;
const bearer = (token: string) => `Bearer ${token}`;

/** A key store that knows some keys by hash and counts every lookup. */
class FakeKeys implements ApiKeyLookup {
  readonly lookups: string[] = [];
  readonly known = new Map<string, ActiveApiKey>();

  add(key: string, expiresAt: Date | null = null): string {
    const keyId = `key_${this.known.size}`;
    this.known.set(hashApiKey(key), { keyId, organizationId: 'org_a', plan: 'free', expiresAt });
    return keyId;
  }

  findActiveByHash(keyHash: string): Promise<ActiveApiKey | null> {
    this.lookups.push(keyHash);
    return Promise.resolve(this.known.get(keyHash) ?? null);
  }
}

const newPortalToken = () => `hbp_${randomBytes(32).toString('base64url')}`;

/** A portal token store that knows some tokens by hash and counts every lookup. */
class FakePortalTokens implements PortalTokenLookup {
  readonly lookups: string[] = [];
  readonly known = new Map<string, ActivePortalToken>();

  add(token: string, expiresAt: Date, readOnly = false): void {
    this.known.set(hashApiKey(token), {
      tokenId: `ptk_${this.known.size}`,
      organizationId: 'org_a',
      applicationId: 'app_a',
      plan: 'pro',
      readOnly,
      expiresAt,
    });
  }

  findActiveByHash(tokenHash: string): Promise<ActivePortalToken | null> {
    this.lookups.push(tokenHash);
    return Promise.resolve(this.known.get(tokenHash) ?? null);
  }
}

function setup(env: Record<string, string> = {}) {
  const config = loadConfig({
    HOOKBASE_ADMIN_TOKEN: 'admin-token-of-this-test',
    HOOKBASE_AUTH_FAILURES_PER_MINUTE: '5',
    HOOKBASE_API_KEY_CACHE_SIZE: '3',
    ...env,
  });
  const keys = new FakeKeys();
  const refusals = new RefusalCounter();
  const auth = new AuthService(config, keys, new RequestLimits(config, refusals));
  return { auth, keys, refusals };
}

async function refusal(promise: Promise<unknown>): Promise<DomainError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('AuthService with portal tokens', () => {
  function portalSetup() {
    const config = loadConfig({ HOOKBASE_ADMIN_TOKEN: 'admin-token-of-this-test' });
    const refusals = new RefusalCounter();
    const tokens = new FakePortalTokens();
    const auth = new AuthService(
      config,
      new FakeKeys(),
      new RequestLimits(config, refusals),
      tokens,
    );
    return { auth, tokens };
  }

  it('admits a portal token as a caller with its scope, remembered by hash, and forgets it on revocation', async () => {
    const { auth, tokens } = portalSetup();
    const token = newPortalToken();
    tokens.add(token, new Date(Date.now() + 60_000), true);
    for (let i = 0; i < 2; i++) {
      expect(await auth.authenticateCaller(bearer(token), '10.0.0.9')).toEqual({
        keyId: 'ptk_0',
        organizationId: 'org_a',
        plan: 'pro',
        portal: { applicationId: 'app_a', readOnly: true },
      });
    }
    expect(tokens.lookups).toEqual([hashApiKey(token)]);
    auth.forgetPortalAccess('app_a');
    tokens.known.clear();
    expect((await refusal(auth.authenticateCaller(bearer(token), '10.0.0.9'))).code).toBe(
      'UNAUTHORIZED',
    );
  });

  it('never admits a portal token where only API keys are (ingest, gRPC)', async () => {
    const { auth, tokens } = portalSetup();
    const token = newPortalToken();
    tokens.add(token, new Date(Date.now() + 60_000));
    expect((await refusal(auth.authenticateApiKey(bearer(token), '10.0.0.8'))).code).toBe(
      'UNAUTHORIZED',
    );
    expect(tokens.lookups).toEqual([]);
  });
});

describe('AuthService', () => {
  it('remembers a valid key by its hash, never the bearer string, and asks the store once', async () => {
    const { auth, keys } = setup();
    const key = newKey();
    keys.add(key);
    for (let i = 0; i < 3; i++) {
      expect(await auth.authenticateApiKey(bearer(key), '10.0.0.1')).toMatchObject({
        organizationId: 'org_a',
        plan: 'free',
      });
    }
    expect(keys.lookups).toEqual([hashApiKey(key)]);
    expect(auth.cachedKeyCount).toBe(1);
    const remembered = [...(auth as unknown as { cache: Map<string, unknown> }).cache.keys()];
    expect(remembered).toEqual([hashApiKey(key)]);
  });

  it('never remembers an invalid key, and stops asking the store once an address has failed too often', async () => {
    const { auth, keys, refusals } = setup();
    const outcomes: string[] = [];
    for (let i = 0; i < 100; i++) {
      const error = await refusal(auth.authenticateApiKey(bearer(newKey()), '10.0.0.2'));
      outcomes.push(error.code);
    }
    expect(auth.cachedKeyCount).toBe(0);
    // Five failures are looked up and answered 401; every later try is 429 without a lookup.
    expect(keys.lookups).toHaveLength(5);
    expect(outcomes.slice(0, 5)).toEqual(Array(5).fill('UNAUTHORIZED'));
    expect(new Set(outcomes.slice(5))).toEqual(new Set(['RATE_LIMITED']));
    expect(refusals.snapshot().auth_failures).toBe(95);
  });

  it('says when to retry after too many failures, and other addresses are not affected', async () => {
    const { auth, keys } = setup();
    for (let i = 0; i < 5; i++)
      await refusal(auth.authenticateApiKey(bearer(newKey()), '10.0.0.3'));
    const error = await refusal(auth.authenticateApiKey(bearer(newKey()), '10.0.0.3'));
    expect(error).toBeInstanceOf(RateLimitedError);
    expect((error as RateLimitedError).retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect((error as RateLimitedError).retryAfterSeconds).toBeLessThanOrEqual(60);
    const key = newKey();
    keys.add(key);
    expect((await auth.authenticateApiKey(bearer(key), '10.0.0.4')).organizationId).toBe('org_a');
  });

  it('counts IPv6 clients by their /64, so fresh addresses do not buy fresh tries', async () => {
    const { auth, keys } = setup();
    for (let i = 0; i < 5; i++) {
      await refusal(auth.authenticateApiKey(bearer(newKey()), `2001:db8:1:2::${i + 1}`));
    }
    const error = await refusal(auth.authenticateApiKey(bearer(newKey()), '2001:db8:1:2::99'));
    expect(error.code).toBe('RATE_LIMITED');
    expect(keys.lookups).toHaveLength(5);
  });

  it('admits a remembered key and the admin token from an address that is refused', async () => {
    const { auth, keys } = setup();
    const key = newKey();
    keys.add(key);
    await auth.authenticateApiKey(bearer(key), '10.0.0.5');
    for (let i = 0; i < 6; i++)
      await refusal(auth.authenticateAdmin(bearer('wrong-admin-token'), '10.0.0.5'));
    expect((await refusal(auth.authenticateApiKey(bearer(newKey()), '10.0.0.5'))).code).toBe(
      'RATE_LIMITED',
    );
    expect((await auth.authenticateApiKey(bearer(key), '10.0.0.5')).organizationId).toBe('org_a');
    await expect(
      auth.authenticateAdmin(bearer('admin-token-of-this-test'), '10.0.0.5'),
    ).resolves.toBeUndefined();
  });

  it.each([
    ['an over-long bearer (90 KB)', `hb_${'A'.repeat(90_000)}`],
    ['a bearer one character longer than a key', `${newKey()}A`],
    ['a bearer of the wrong shape', 'hb_wrong'],
    ['a bearer with characters no key has', `hb_${'='.repeat(43)}`],
  ])('refuses %s without a lookup and without remembering it', async (_, token) => {
    const { auth, keys } = setup();
    const error = await refusal(auth.authenticateApiKey(bearer(token), '10.0.0.6'));
    expect(error.code).toBe('UNAUTHORIZED');
    expect(keys.lookups).toEqual([]);
    expect(auth.cachedKeyCount).toBe(0);
  });

  it('refuses a missing or over-long Authorization header without reading it', async () => {
    const { auth, keys } = setup();
    expect((await refusal(auth.authenticateApiKey(undefined, '10.0.0.7'))).message).toMatch(
      /Send Authorization/,
    );
    expect(
      (await refusal(auth.authenticateApiKey(bearer('x'.repeat(100_000)), '10.0.0.7'))).message,
    ).toMatch(/longer than any key or token \(256 characters\)/);
    expect(keys.lookups).toEqual([]);
    expect(readBearer(`Bearer ${'x'.repeat(256)}`)).toHaveLength(256);
    expect(readBearer(`Bearer ${'x'.repeat(257)}`)).toBeNull();
  });

  it('keeps at most HOOKBASE_API_KEY_CACHE_SIZE keys, the oldest going first', async () => {
    const { auth, keys } = setup();
    const all = Array.from({ length: 5 }, newKey);
    for (const key of all) keys.add(key);
    for (const key of all) await auth.authenticateApiKey(bearer(key), '10.0.0.8');
    expect(auth.cachedKeyCount).toBe(3);
    keys.lookups.length = 0;
    await auth.authenticateApiKey(bearer(all[4]), '10.0.0.8');
    await auth.authenticateApiKey(bearer(all[0]), '10.0.0.8');
    expect(keys.lookups).toEqual([hashApiKey(all[0])]);
  });

  it('never admits a key from the cache past its expiry', async () => {
    const { auth, keys } = setup({ HOOKBASE_API_KEY_CACHE_MS: '600000' });
    const key = newKey();
    const now = Date.now();
    keys.add(key, new Date(now + 1_000));
    const clock = jest.spyOn(Date, 'now').mockReturnValue(now);
    try {
      await auth.authenticateApiKey(bearer(key), '10.0.0.9');
      clock.mockReturnValue(now + 1_001);
      keys.known.clear(); // the store no longer returns it: it has expired
      expect((await refusal(auth.authenticateApiKey(bearer(key), '10.0.0.9'))).code).toBe(
        'UNAUTHORIZED',
      );
      expect(keys.lookups).toHaveLength(2);
    } finally {
      clock.mockRestore();
    }
  });

  it('forgets a revoked key at once', async () => {
    const { auth, keys } = setup();
    const key = newKey();
    const keyId = keys.add(key);
    await auth.authenticateApiKey(bearer(key), '10.0.0.10');
    auth.forgetKey(keyId);
    expect(auth.cachedKeyCount).toBe(0);
    keys.known.clear();
    expect((await refusal(auth.authenticateApiKey(bearer(key), '10.0.0.10'))).code).toBe(
      'UNAUTHORIZED',
    );
  });

  describe('checking a key in use again before its copy runs out', () => {
    let clock: jest.SpyInstance<number, []>;
    const start = 1_000_000;
    beforeEach(() => {
      clock = jest.spyOn(Date, 'now').mockReturnValue(start);
    });
    afterEach(() => clock.mockRestore());
    const settle = () => new Promise((resolve) => setImmediate(resolve));

    /** A store whose lookups after the first wait until the test answers them. */
    function heldStore(keys: FakeKeys) {
      const held: ((failure?: Error) => void)[] = [];
      const answer = keys.findActiveByHash.bind(keys);
      jest.spyOn(keys, 'findActiveByHash').mockImplementation((hash) => {
        if (keys.lookups.length === 0) return answer(hash);
        keys.lookups.push(hash);
        return new Promise((resolve, reject) =>
          held.push((failure) =>
            failure ? reject(failure) : resolve(keys.known.get(hash) ?? null),
          ),
        );
      });
      return held;
    }

    it('checks it in the background in the last quarter of the cache time; no request waits, and it stays remembered', async () => {
      const { auth, keys } = setup({ HOOKBASE_API_KEY_CACHE_MS: '10000' });
      const key = newKey();
      keys.add(key);
      const held = heldStore(keys);
      await auth.authenticateApiKey(bearer(key), '10.0.1.1');
      clock.mockReturnValue(start + 7_000); // three tenths left: not yet
      await auth.authenticateApiKey(bearer(key), '10.0.1.1');
      expect(keys.lookups).toHaveLength(1);

      clock.mockReturnValue(start + 8_000);
      // Answered from the copy while the check is under way (the store has not answered).
      expect((await auth.authenticateApiKey(bearer(key), '10.0.1.1')).keyId).toBe('key_0');
      await auth.authenticateApiKey(bearer(key), '10.0.1.1');
      expect(keys.lookups).toHaveLength(2);
      held[0]();
      await settle();

      // Past the first copy's time: remembered anew from the check, so nothing is looked up.
      clock.mockReturnValue(start + 12_000);
      expect((await auth.authenticateApiKey(bearer(key), '10.0.1.1')).keyId).toBe('key_0');
      expect(keys.lookups).toHaveLength(2);
      // The new copy runs from the check's start (8 s): in its last quarter it is checked again.
      clock.mockReturnValue(start + 16_000);
      await auth.authenticateApiKey(bearer(key), '10.0.1.1');
      expect(keys.lookups).toHaveLength(3);
    });

    it('forgets a key the background check no longer finds (revoked in another process)', async () => {
      const { auth, keys } = setup({ HOOKBASE_API_KEY_CACHE_MS: '10000' });
      const key = newKey();
      keys.add(key);
      const held = heldStore(keys);
      await auth.authenticateApiKey(bearer(key), '10.0.1.2');
      clock.mockReturnValue(start + 9_000);
      await auth.authenticateApiKey(bearer(key), '10.0.1.2');
      keys.known.clear();
      held[0]();
      await settle();
      expect(auth.cachedKeyCount).toBe(0);
      const refused = refusal(auth.authenticateApiKey(bearer(key), '10.0.1.2'));
      await settle();
      held[1]();
      expect((await refused).code).toBe('UNAUTHORIZED');
    });

    it('keeps a key forgotten here forgotten, whatever the background check finds', async () => {
      const { auth, keys } = setup({ HOOKBASE_API_KEY_CACHE_MS: '10000' });
      const key = newKey();
      const keyId = keys.add(key);
      const held = heldStore(keys);
      await auth.authenticateApiKey(bearer(key), '10.0.1.3');
      clock.mockReturnValue(start + 9_000);
      await auth.authenticateApiKey(bearer(key), '10.0.1.3');
      auth.forgetKey(keyId);
      held[0]();
      await settle();
      expect(auth.cachedKeyCount).toBe(0);
    });

    it('leaves the copy to run out when the background check fails, then checks on the request', async () => {
      const { auth, keys } = setup({ HOOKBASE_API_KEY_CACHE_MS: '10000' });
      const key = newKey();
      keys.add(key);
      const held = heldStore(keys);
      await auth.authenticateApiKey(bearer(key), '10.0.1.4');
      clock.mockReturnValue(start + 9_000);
      await auth.authenticateApiKey(bearer(key), '10.0.1.4');
      held[0](new Error('database gone'));
      await settle();
      // Tried again by the next request while the copy lasts, still without waiting for it.
      clock.mockReturnValue(start + 9_500);
      expect((await auth.authenticateApiKey(bearer(key), '10.0.1.4')).keyId).toBe('key_0');
      expect(keys.lookups).toHaveLength(3);
      held[1](new Error('database gone'));
      await settle();
      clock.mockReturnValue(start + 10_000);
      const checked = auth.authenticateApiKey(bearer(key), '10.0.1.4');
      await settle();
      expect(keys.lookups).toHaveLength(4);
      held[2]();
      expect((await checked).keyId).toBe('key_0');
    });

    it("never checks a copy early that its key's expiry cuts short", async () => {
      const { auth, keys } = setup({ HOOKBASE_API_KEY_CACHE_MS: '10000' });
      const key = newKey();
      keys.add(key, new Date(start + 5_000));
      heldStore(keys);
      await auth.authenticateApiKey(bearer(key), '10.0.1.5');
      clock.mockReturnValue(start + 4_900);
      await auth.authenticateApiKey(bearer(key), '10.0.1.5');
      expect(keys.lookups).toHaveLength(1);
    });
  });
});
