import { randomFillSync } from 'node:crypto';

/** Prefixes of Hookbase ids: the kind of thing an id names is visible in the id itself. */
export type IdPrefix =
  'org' | 'key' | 'ep' | 'evt' | 'msg' | 'att' | 'dlq' | 'sec' | 'inv' | 'app' | 'ptk';

// Crockford base32: ids sort by creation time (10 time chars, like ULID), so cursors can page
// by id and the newest rows sit together in indexes.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const CODES = Buffer.from(ALPHABET, 'latin1');

// The time part of the last millisecond asked for: ids made in the same millisecond (the events
// of a batch, the messages of an event) share it instead of encoding it again.
let lastMs = -1;
let lastTime = '';

function encodeTime(ms: number): string {
  if (ms !== lastMs) {
    const text = Buffer.allocUnsafe(10);
    let value = ms;
    for (let i = 9; i >= 0; i--) {
      text[i] = CODES[value % 32];
      value = Math.floor(value / 32);
    }
    lastTime = text.toString('latin1');
    lastMs = ms;
  }
  return lastTime;
}

// Random bytes come from the system's CSPRNG in blocks, not one call per id: ingest makes several
// ids per event, and a call per id was a measurable share of its CPU. Each byte is used once.
const POOL = Buffer.alloc(4096);
let poolOffset = POOL.length;
/** Where the random part's characters are written before they become a string. */
const RANDOM_TEXT = Buffer.alloc(16);

function encodeRandom(): string {
  if (poolOffset + RANDOM_TEXT.length > POOL.length) {
    randomFillSync(POOL);
    poolOffset = 0;
  }
  for (let i = 0; i < RANDOM_TEXT.length; i++) RANDOM_TEXT[i] = CODES[POOL[poolOffset + i] % 32];
  poolOffset += RANDOM_TEXT.length;
  return RANDOM_TEXT.toString('latin1');
}

export function newId(prefix: IdPrefix, now: number = Date.now()): string {
  return `${prefix}_${encodeTime(now)}${encodeRandom()}`;
}
