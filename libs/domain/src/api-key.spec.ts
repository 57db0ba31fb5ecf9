import {
  API_KEY_LENGTH,
  apiKeyCacheUntil,
  apiKeyRecheckDue,
  apiKeyState,
  clientAddressKey,
  isWellFormedApiKey,
  retryAfterSeconds,
} from './api-key';

describe('API key shape', () => {
  const key = `hb_${'A'.repeat(40)}b-_`;

  it('takes exactly hb_ and 43 base64url characters', () => {
    expect(key).toHaveLength(API_KEY_LENGTH);
    expect(isWellFormedApiKey(key)).toBe(true);
  });

  it.each([
    ['too short', key.slice(0, -1)],
    ['too long', `${key}A`],
    ['far too long', `hb_${'A'.repeat(90_000)}`],
    ['another prefix', `hk_${key.slice(3)}`],
    ['a character outside base64url', `${key.slice(0, -1)}=`],
    ['whitespace', `${key.slice(0, -1)} `],
    ['empty', ''],
  ])('refuses %s', (_, token) => {
    expect(isWellFormedApiKey(token)).toBe(false);
  });
});

describe('API key state', () => {
  const now = new Date('2026-12-01T12:00:00Z');
  const before = new Date('2026-12-01T11:59:59Z');
  const after = new Date('2026-12-01T12:00:01Z');

  it.each([
    [{ revokedAt: null, expiresAt: null }, 'active'],
    [{ revokedAt: null, expiresAt: after }, 'active'],
    [{ revokedAt: null, expiresAt: now }, 'expired'],
    [{ revokedAt: null, expiresAt: before }, 'expired'],
    [{ revokedAt: before, expiresAt: null }, 'revoked'],
    [{ revokedAt: before, expiresAt: before }, 'revoked'],
    [{ revokedAt: after, expiresAt: null }, 'active'],
  ] as const)('%o is %s', (key, state) => {
    expect(apiKeyState(key, now)).toBe(state);
  });

  it('is remembered for the cache time, never past its expiry', () => {
    expect(apiKeyCacheUntil(1_000, 10_000, null)).toBe(11_000);
    expect(apiKeyCacheUntil(1_000, 10_000, new Date(5_000))).toBe(5_000);
    expect(apiKeyCacheUntil(1_000, 10_000, new Date(50_000))).toBe(11_000);
  });

  it.each([
    // [now, until, expiresAt, due]
    [1_000, 11_000, null, false], // just read
    [8_499, 11_000, null, false], // more than a quarter of the cache time left
    [8_500, 11_000, null, true], // a quarter left
    [10_999, 11_000, null, true],
    [11_000, 11_000, null, false], // gone: the request checks it itself
    [9_000, 11_000, 50_000, true], // the key outlives the copy
    [9_000, 11_000, 11_000, false], // the copy ends with the key: a check would not extend it
    [9_000, 11_000, 10_000, false],
  ] as const)(
    'at %d, a copy until %d of a key expiring at %s is checked again early: %s',
    (now, until, expiresAt, due) => {
      const copy = { until, expiresAt: expiresAt === null ? null : new Date(expiresAt) };
      expect(apiKeyRecheckDue(now, 10_000, copy)).toBe(due);
    },
  );
});

describe('client address key', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['::ffff:10.1.2.3', '10.1.2.3'],
    ['::1', '0:0:0:0::/64'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2:ffff:eeee:dddd:cccc', '2001:db8:1:2::/64'],
    ['2001:0DB8:0001:0002::1', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['[2001:db8:1:2::7]', '2001:db8:1:2::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['64:ff9b::10.0.0.1', '64:ff9b:0:0::/64'],
    [undefined, 'unknown'],
    ['', 'unknown'],
    ['not an address', 'not an address'],
  ])('%s counts as %s', (address, key) => {
    expect(clientAddressKey(address)).toBe(key);
  });
});

describe('Retry-After', () => {
  it.each([
    [0, 1],
    [1, 1],
    [999, 1],
    [1000, 1],
    [1001, 2],
    [59_500, 60],
  ])('%d ms is %d s', (ms, seconds) => {
    expect(retryAfterSeconds(ms)).toBe(seconds);
  });
});
