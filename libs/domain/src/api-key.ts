/**
 * API keys as the edge sees them before any lookup: what shape a key has, when one counts as
 * active, and which client address a failed authentication is charged to.
 */

/** `hb_` and 32 random bytes in base64url (43 characters): every key Hookbase issues. */
export const API_KEY_PATTERN = /^hb_[A-Za-z0-9_-]{43}$/;
export const API_KEY_LENGTH = 46;
/** How much of a key is kept in clear to tell keys apart in a list (`hb_` and 7 characters). */
export const API_KEY_PREFIX_LENGTH = 10;

/**
 * The longest bearer string read at all: an API key is 46 characters and the admin token at most
 * this long (checked at boot). Anything longer is refused before it is parsed, looked up or kept.
 */
export const MAX_BEARER_LENGTH = 256;

/** Whether a bearer string can be an API key Hookbase issued: only such strings are looked up. */
export function isWellFormedApiKey(token: string): boolean {
  return token.length === API_KEY_LENGTH && API_KEY_PATTERN.test(token);
}

export type ApiKeyState = 'active' | 'revoked' | 'expired';

/** A key is active until it is revoked or its expiry time has come. */
export function apiKeyState(
  key: { revokedAt: Date | null; expiresAt: Date | null },
  now: Date,
): ApiKeyState {
  if (key.revokedAt !== null && key.revokedAt.getTime() <= now.getTime()) return 'revoked';
  if (key.expiresAt !== null && key.expiresAt.getTime() <= now.getTime()) return 'expired';
  return 'active';
}

/**
 * How long a checked key may be remembered: the cache time, but never past the key's expiry, so an
 * expired key is never admitted from the cache.
 */
export function apiKeyCacheUntil(nowMs: number, cacheMs: number, expiresAt: Date | null): number {
  const until = nowMs + cacheMs;
  return expiresAt === null ? until : Math.min(until, expiresAt.getTime());
}

/**
 * Whether a remembered key in use should be checked again now, in the background, while its copy
 * still serves: in the last quarter of its cache time, and only when the key outlives that copy
 * (a copy cut short by the key's expiry would come back no longer). A key in steady use so never
 * makes a request wait for its check, and no copy is trusted past its cache time.
 */
export function apiKeyRecheckDue(
  nowMs: number,
  cacheMs: number,
  copy: { until: number; expiresAt: Date | null },
): boolean {
  if (copy.until <= nowMs || copy.until - nowMs > cacheMs / 4) return false;
  return copy.expiresAt === null || copy.expiresAt.getTime() > copy.until;
}

/**
 * What failed authentications are counted under: an IPv4 address as it is (an IPv4-mapped IPv6
 * form as its IPv4 address), an IPv6 address by its /64, since one host commonly holds a whole
 * /64 and could otherwise take a fresh address for every try.
 */
export function clientAddressKey(address: string | undefined): string {
  if (!address) return 'unknown';
  const text = address
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(text);
  if (mapped) return mapped[1];
  if (!text.includes(':')) return text;
  const groups = expandIpv6(text.replace(/%.*$/, ''));
  if (!groups) return text;
  return `${groups.slice(0, 4).join(':')}::/64`;
}

/**
 * The eight 16-bit groups of an IPv6 address (hex, no leading zeros), or null if it is not one. A
 * dotted IPv4 tail counts as its two groups (only the first four groups are used here).
 */
function expandIpv6(text: string): string[] | null {
  const v4 = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (v4 && v4.slice(1).some((byte) => Number(byte) > 255)) return null;
  const body = v4 ? `${text.slice(0, v4.index)}0:0` : text;
  const halves = body.split('::');
  if (halves.length > 2) return null;
  const parse = (part: string) => (part === '' ? [] : part.split(':'));
  const head = parse(halves[0]);
  const rest = halves.length === 2 ? parse(halves[1]) : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...rest];
  if (!groups.every((group) => /^[0-9a-f]{1,4}$/.test(group))) return null;
  return groups.map((group) => parseInt(group, 16).toString(16));
}

/** A wait in milliseconds as a Retry-After value: whole seconds, at least 1. */
export function retryAfterSeconds(waitMs: number): number {
  return Math.max(1, Math.ceil(waitMs / 1000));
}
