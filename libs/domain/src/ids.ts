import { randomFillSync } from 'node:crypto';

/** Prefixes of Hookbase ids: the kind of thing an id names is visible in the id itself. */
export type IdPrefix =
  'org' | 'key' | 'ep' | 'evt' | 'msg' | 'att' | 'dlq' | 'sec' | 'inv' | 'app' | 'ptk';

// Crockford base32: ids sort by creation time (10 time chars, like ULID), so cursors can page
// by id and the newest rows sit together in indexes.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

function encodeTime(ms: number): string {
  let out = '';
  let value = ms;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[value % 32] + out;
    value = Math.floor(value / 32);
  }
  return out;
}

// Random bytes come from the system's CSPRNG in blocks, not one call per id: ingest makes several
// ids per event, and a call per id was a measurable share of its CPU. Each byte is used once.
const POOL = Buffer.alloc(4096);
let poolOffset = POOL.length;

function encodeRandom(length: number): string {
  if (poolOffset + length > POOL.length) {
    randomFillSync(POOL);
    poolOffset = 0;
  }
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[POOL[poolOffset + i] % 32];
  poolOffset += length;
  return out;
}

export function newId(prefix: IdPrefix, now: number = Date.now()): string {
  return `${prefix}_${encodeTime(now)}${encodeRandom(16)}`;
}
