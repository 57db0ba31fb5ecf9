import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { DomainError } from './errors';
import type { EndpointKind, EndpointStatus } from './model';

/**
 * Rules of polling endpoints (ADR 0011). Each message for a polling endpoint gets a place in the
 * endpoint's poll log, a sequence number (1, 2, 3 …) given when the fan-out records it, in
 * acceptance order. A cursor names a place in that log: "everything up to here was seen". It is
 * opaque to clients (base64url), bound to its endpoint, signed with a server key (HMAC-SHA256,
 * ADR 0017) so that no client can make one up to skip messages, and checked strictly.
 */

export const POLL_LIMIT = { min: 1, max: 500, default: 100 } as const;

/** Highest sequence a cursor may name: PostgreSQL's bigint. */
export const MAX_POLL_SEQUENCE = 2n ** 63n - 1n;

const CURSOR_VERSION = 'p2';
/** Bytes of the HMAC-SHA256 kept in a cursor: 128 bits, far beyond guessing. */
const CURSOR_MAC_BYTES = 16;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const CANONICAL_DECIMAL = /^(0|[1-9][0-9]{0,18})$/;

export const pollQuerySchema = z.object({
  cursor: z.string().min(1).max(200).optional(),
  limit: z.coerce
    .number()
    .int()
    .min(POLL_LIMIT.min)
    .max(POLL_LIMIT.max)
    .default(POLL_LIMIT.default),
});
export type PollQuery = z.infer<typeof pollQuerySchema>;

/**
 * The keys that sign and check cursors: the first signs, every one is accepted (a key rotation
 * keeps the cursors already handed out). At least one.
 */
export type PollCursorKeys = readonly [Uint8Array, ...Uint8Array[]];

function cursorMac(key: Uint8Array, signed: string): Buffer {
  return createHmac('sha256', key).update(signed, 'utf8').digest().subarray(0, CURSOR_MAC_BYTES);
}

/** The cursor placed after `sequence` in `endpointId`'s log (0 = before the first message). */
export function encodePollCursor(
  keys: PollCursorKeys,
  endpointId: string,
  sequence: bigint,
): string {
  if (sequence < 0n || sequence > MAX_POLL_SEQUENCE) {
    throw new RangeError(`poll sequence out of range: ${sequence}`);
  }
  const signed = `${CURSOR_VERSION}.${endpointId}.${sequence}`;
  const mac = cursorMac(keys[0], signed).toString('base64url');
  return Buffer.from(`${signed}.${mac}`, 'utf8').toString('base64url');
}

function invalidCursor(reason: string): DomainError {
  return new DomainError('VALIDATION_FAILED', `Invalid request: cursor: ${reason}`, {
    issues: [{ path: 'cursor', message: reason }],
  });
}

function signedByOneOf(keys: PollCursorKeys, signed: string, macText: string): boolean {
  const mac = Buffer.from(macText, 'base64url');
  if (mac.length !== CURSOR_MAC_BYTES) return false;
  return keys.some((key) => timingSafeEqual(cursorMac(key, signed), mac));
}

/**
 * The sequence a cursor names, or 0 when there is none (start of the log). Only cursors this
 * endpoint handed out are taken: anything else (made up, edited, truncated, signed with another
 * key, another endpoint's) is a VALIDATION_FAILED, never silently read as some other place.
 */
export function decodePollCursor(
  keys: PollCursorKeys,
  endpointId: string,
  cursor: string | undefined,
): bigint {
  if (cursor === undefined) return 0n;
  const notOurs = () => invalidCursor('not a cursor returned by this endpoint');
  if (!BASE64URL.test(cursor)) throw notOurs();
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const parts = text.split('.');
  if (parts.length !== 4 || parts[0] !== CURSOR_VERSION || !CANONICAL_DECIMAL.test(parts[2])) {
    throw notOurs();
  }
  if (!BASE64URL.test(parts[3]) || !signedByOneOf(keys, parts.slice(0, 3).join('.'), parts[3])) {
    throw notOurs();
  }
  if (parts[1] !== endpointId) throw invalidCursor('this cursor belongs to another endpoint');
  const sequence = BigInt(parts[2]);
  if (sequence > MAX_POLL_SEQUENCE) throw notOurs();
  // Only the exact encoding is accepted (base64url has more than one spelling for some bytes).
  if (encodeWith(parts, endpointId, sequence) !== cursor) throw notOurs();
  return sequence;
}

/** The cursor as it was handed out, with the MAC it carries (which may be a previous key's). */
function encodeWith(parts: string[], endpointId: string, sequence: bigint): string {
  const mac = Buffer.from(parts[3], 'base64url').toString('base64url');
  return Buffer.from(`${CURSOR_VERSION}.${endpointId}.${sequence}.${mac}`, 'utf8').toString(
    'base64url',
  );
}

/**
 * Where the consumer goes next: after the last message returned, or where it was when nothing
 * was returned. Always a cursor, never null: a consumer keeps passing it back.
 */
export function nextPollSequence(from: bigint, returned: readonly bigint[]): bigint {
  return returned.length === 0 ? from : returned[returned.length - 1];
}

/**
 * Whether a poll hands out messages now. Paused and disabled endpoints hold their messages, as
 * they do for push kinds: polls answer an empty page (the cursor unchanged) until it is active.
 */
export function pollServes(status: EndpointStatus): boolean {
  switch (status) {
    case 'active':
      return true;
    case 'paused':
    case 'disabled':
      return false;
    default: {
      const unreachable: never = status;
      throw new Error(`unknown endpoint status ${String(unreachable)}`);
    }
  }
}

/** How many places each endpoint needs, endpoints sorted (the order counters are locked in). */
export function pollPlacesNeeded(endpointIds: readonly string[]): [string, number][] {
  const counts = new Map<string, number>();
  for (const id of endpointIds) counts.set(id, (counts.get(id) ?? 0) + 1);
  return [...counts.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Gives each message (listed in acceptance order, by endpoint) its sequence, from each endpoint
 * counter's new last value after it was raised by that endpoint's count: an endpoint's messages
 * get the consecutive numbers ending at that value, in the order listed.
 */
export function assignPollSequences(
  endpointIds: readonly string[],
  newLast: ReadonlyMap<string, bigint>,
): bigint[] {
  const next = new Map<string, bigint>();
  for (const [id, count] of pollPlacesNeeded(endpointIds)) {
    const last = newLast.get(id);
    if (last === undefined) throw new Error(`no poll counter for endpoint ${id}`);
    next.set(id, last - BigInt(count) + 1n);
  }
  return endpointIds.map((id) => {
    const sequence = next.get(id)!;
    next.set(id, sequence + 1n);
    return sequence;
  });
}

/**
 * A polling endpoint has no target: no url, no config, no signing secret. Given any of them on
 * create or PATCH, the request is refused rather than the value stored unused.
 */
export function checkPollingFields(
  kind: EndpointKind,
  input: { url?: string; config?: Record<string, unknown>; secret?: string },
): void {
  if (kind !== 'polling') return;
  const given = (['url', 'config', 'secret'] as const).filter(
    (field) => input[field] !== undefined,
  );
  if (given.length === 0) return;
  throw new DomainError(
    'VALIDATION_FAILED',
    `Invalid request: a polling endpoint has no ${given.join(', ')}`,
    { issues: given.map((path) => ({ path, message: 'not used by polling endpoints' })) },
  );
}
