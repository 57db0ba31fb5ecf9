import { createHmac } from 'node:crypto';
import { DomainError } from './errors';
import { ENDPOINT_KINDS, ENDPOINT_STATUSES } from './model';
import {
  assignPollSequences,
  checkPollingFields,
  decodePollCursor,
  encodePollCursor,
  MAX_POLL_SEQUENCE,
  nextPollSequence,
  pollPlacesNeeded,
  pollQuerySchema,
  pollServes,
  type PollCursorKeys,
} from './poll-log';

const KEYS: PollCursorKeys = [Buffer.alloc(32, 7)];
const EP = 'ep_01jz0000000000000000000000';
const OTHER = 'ep_01jz0000000000000000000001';

const encode = (endpointId: string, sequence: bigint) =>
  encodePollCursor(KEYS, endpointId, sequence);
const decode = (endpointId: string, cursor: string | undefined) =>
  decodePollCursor(KEYS, endpointId, cursor);

function errorOf(run: () => unknown): DomainError | null {
  try {
    run();
    return null;
  } catch (error) {
    return error as DomainError;
  }
}

function mac(signed: string, key: Uint8Array = KEYS[0]): string {
  return createHmac('sha256', key).update(signed).digest().subarray(0, 16).toString('base64url');
}

describe('poll cursors', () => {
  it.each([0n, 1n, 2n, 99n, 1_000_000n, 2n ** 53n + 1n, MAX_POLL_SEQUENCE])(
    'round-trips sequence %s',
    (sequence) => {
      const cursor = encode(EP, sequence);
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(decode(EP, cursor)).toBe(sequence);
    },
  );

  it('reads no cursor as the start of the log', () => {
    expect(decode(EP, undefined)).toBe(0n);
  });

  it('orders nothing by the cursor text: different sequences give different cursors', () => {
    const cursors = new Set([0n, 1n, 10n, 11n, 100n].map((s) => encode(EP, s)));
    expect(cursors.size).toBe(5);
  });

  it('refuses sequences that cannot be encoded', () => {
    expect(() => encode(EP, -1n)).toThrow(RangeError);
    expect(() => encode(EP, MAX_POLL_SEQUENCE + 1n)).toThrow(RangeError);
  });

  const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64url');
  // A made-up sequence signed with the right key: refused for its form, not its MAC.
  const signedB64 = (sequence: string) =>
    b64(`p2.${EP}.${sequence}.${mac(`p2.${EP}.${sequence}`)}`);
  it.each([
    ['empty', ''],
    ['not base64url', 'abc+/='],
    ['padding', `${encode(EP, 5n)}=`],
    ['spaces', ' abc'],
    ['a plain number', '5'],
    ['garbage bytes', b64('\u00ff\u00fe')],
    ['an unsigned cursor of the earlier version', b64(`p1.${EP}.5`)],
    ['unsigned', b64(`p2.${EP}.5`)],
    ['signed with an empty MAC', b64(`p2.${EP}.5.`)],
    ['another version', b64(`p3.${EP}.5.${mac(`p3.${EP}.5`)}`)],
    ['no version', b64(`${EP}.5`)],
    ['too many parts', b64(`p2.${EP}.5.${mac(`p2.${EP}.5`)}.6`)],
    ['a negative sequence', signedB64(`-5`)],
    ['a leading zero', signedB64(`05`)],
    ['a fraction', signedB64(`5.0`)],
    ['an exponent', signedB64(`5e3`)],
    ['hex', signedB64(`0x5`)],
    ['an empty sequence', signedB64(``)],
    ['past bigint', signedB64(`${MAX_POLL_SEQUENCE + 1n}`)],
    ['twenty digits', signedB64(`10000000000000000000`)],
    ['truncated', encode(EP, 123456n).slice(0, -2)],
  ])('refuses a cursor that is %s with VALIDATION_FAILED', (_, cursor) => {
    const error = errorOf(() => decode(EP, cursor));
    expect(error).toBeInstanceOf(DomainError);
    expect(error?.code).toBe('VALIDATION_FAILED');
    expect(error?.details).toEqual({ issues: [expect.objectContaining({ path: 'cursor' })] });
  });

  it("refuses another endpoint's cursor", () => {
    const error = errorOf(() => decode(EP, encode(OTHER, 3n)));
    expect(error?.code).toBe('VALIDATION_FAILED');
    expect(error?.message).toContain('another endpoint');
  });

  it('refuses a non-canonical spelling of a valid cursor', () => {
    const cursor = encode(EP, 7n);
    // The last base64url character may carry unused bits; flipping them decodes the same bytes.
    const last = cursor[cursor.length - 1];
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const variants = [...alphabet]
      .filter((c) => c !== last)
      .map((c) => cursor.slice(0, -1) + c)
      .filter((v) => Buffer.from(v, 'base64url').equals(Buffer.from(cursor, 'base64url')));
    for (const variant of variants) {
      expect(errorOf(() => decode(EP, variant))?.code).toBe('VALIDATION_FAILED');
    }
  });
});

describe('signed poll cursors', () => {
  const read = (cursor: string) => Buffer.from(cursor, 'base64url').toString('utf8');
  const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

  it('refuses a cursor whose sequence was moved forward (its MAC no longer matches)', () => {
    const real = read(encode(EP, 5n)); // p2.<ep>.5.<mac>
    const [version, endpoint, , tag] = real.split('.');
    const forged = b64([version, endpoint, '500', tag].join('.'));
    const error = errorOf(() => decode(EP, forged));
    expect(error?.code).toBe('VALIDATION_FAILED');
    expect(error?.message).toContain('not a cursor returned by this endpoint');
  });

  it('refuses a cursor signed with a key the server does not hold', () => {
    const elsewhere = encodePollCursor([Buffer.alloc(32, 9)], EP, 5n);
    expect(errorOf(() => decode(EP, elsewhere))?.code).toBe('VALIDATION_FAILED');
  });

  it('takes cursors signed with a previous key, and signs new ones with the first key', () => {
    const previous = Buffer.alloc(32, 3);
    const old = encodePollCursor([previous], EP, 9n);
    const rotated: PollCursorKeys = [KEYS[0], previous];
    expect(decodePollCursor(rotated, EP, old)).toBe(9n);
    expect(encodePollCursor(rotated, EP, 9n)).toBe(encode(EP, 9n));
  });

  it('refuses an altered MAC, even one flipped in a single bit', () => {
    const [version, endpoint, sequence, tag] = read(encode(EP, 5n)).split('.');
    const bytes = Buffer.from(tag, 'base64url');
    bytes[0] ^= 1;
    const altered = b64([version, endpoint, sequence, bytes.toString('base64url')].join('.'));
    expect(errorOf(() => decode(EP, altered))?.code).toBe('VALIDATION_FAILED');
  });
});

describe('poll query', () => {
  it('defaults limit to 100 and takes 1 to 500', () => {
    expect(pollQuerySchema.parse({})).toEqual({ limit: 100 });
    expect(pollQuerySchema.parse({ limit: '1' }).limit).toBe(1);
    expect(pollQuerySchema.parse({ limit: '500' }).limit).toBe(500);
    expect(pollQuerySchema.parse({ cursor: 'abc', limit: '20' })).toEqual({
      cursor: 'abc',
      limit: 20,
    });
  });

  it.each(['0', '-1', '501', '1.5', 'ten', '1e9', ''])('refuses limit %j', (limit) => {
    expect(pollQuerySchema.safeParse({ limit }).success).toBe(false);
  });

  it('refuses an empty or over-long cursor', () => {
    expect(pollQuerySchema.safeParse({ cursor: '' }).success).toBe(false);
    expect(pollQuerySchema.safeParse({ cursor: 'a'.repeat(201) }).success).toBe(false);
  });
});

describe('nextPollSequence', () => {
  it('moves past the last message returned', () => {
    expect(nextPollSequence(4n, [5n, 6n, 9n])).toBe(9n);
  });
  it('stays put when nothing was returned', () => {
    expect(nextPollSequence(4n, [])).toBe(4n);
    expect(nextPollSequence(0n, [])).toBe(0n);
  });
});

describe('pollServes', () => {
  it.each(ENDPOINT_STATUSES)('%s', (status) => {
    expect(pollServes(status)).toBe(status === 'active');
  });
});

describe('poll sequence assignment', () => {
  it('counts places per endpoint, endpoints sorted', () => {
    expect(pollPlacesNeeded(['b', 'a', 'b', 'c', 'b'])).toEqual([
      ['a', 1],
      ['b', 3],
      ['c', 1],
    ]);
    expect(pollPlacesNeeded([])).toEqual([]);
  });

  it('gives each endpoint consecutive numbers ending at its new last, in listed order', () => {
    const ids = ['b', 'a', 'b', 'c', 'b'];
    const newLast = new Map([
      ['a', 1n],
      ['b', 13n],
      ['c', 100n],
    ]);
    expect(assignPollSequences(ids, newLast)).toEqual([11n, 1n, 12n, 100n, 13n]);
  });

  it('numbers a fresh counter from 1', () => {
    expect(assignPollSequences(['a', 'a', 'a'], new Map([['a', 3n]]))).toEqual([1n, 2n, 3n]);
  });

  it('keeps the acceptance order per endpoint for any interleaving', () => {
    const endpoints = ['x', 'y', 'z'];
    for (let trial = 0; trial < 200; trial++) {
      const ids = Array.from(
        { length: 1 + (trial % 37) },
        (_, i) => endpoints[(i * 7 + trial) % 3],
      );
      const before = new Map(endpoints.map((id, i) => [id, BigInt(i * 1000 + trial)]));
      const newLast = new Map(
        pollPlacesNeeded(ids).map(([id, n]) => [id, before.get(id)! + BigInt(n)] as const),
      );
      const sequences = assignPollSequences(ids, newLast);
      for (const id of endpoints) {
        const mine = sequences.filter((_, i) => ids[i] === id);
        const start = before.get(id)! + 1n;
        expect(mine).toEqual(mine.map((_, k) => start + BigInt(k)));
      }
    }
  });

  it('fails loudly when a counter is missing', () => {
    expect(() => assignPollSequences(['a'], new Map())).toThrow('no poll counter');
  });
});

describe('checkPollingFields', () => {
  it('takes a polling endpoint without url, config or secret', () => {
    expect(errorOf(() => checkPollingFields('polling', {}))).toBeNull();
  });

  it.each([
    [{ url: 'https://example.com' }, ['url']],
    [{ config: {} }, ['config']],
    [{ secret: 'whsec_x' }, ['secret']],
    [
      { url: 'https://example.com', config: { a: 1 }, secret: 'whsec_x' },
      ['url', 'config', 'secret'],
    ],
  ])('refuses %j on a polling endpoint', (input, fields) => {
    const error = errorOf(() => checkPollingFields('polling', input));
    expect(error?.code).toBe('VALIDATION_FAILED');
    expect((error?.details as { issues: { path: string }[] }).issues.map((i) => i.path)).toEqual(
      fields,
    );
  });

  it.each(ENDPOINT_KINDS.filter((kind) => kind !== 'polling'))(
    'leaves %s endpoints alone',
    (kind) => {
      expect(
        errorOf(() => checkPollingFields(kind, { url: 'https://x', config: {}, secret: 's' })),
      ).toBeNull();
    },
  );
});
