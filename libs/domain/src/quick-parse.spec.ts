import { z } from 'zod';
import { newId } from './ids';
import { publishEventParser, publishEventSchema } from './inputs';
import {
  deliveryRecordParser,
  deliveryRecordSchema,
  eventEnvelopeParser,
  eventEnvelopeSchema,
} from './records';
import { listTest, Parser, rememberedTextTest, textTest, withQuickPath } from './quick-parse';

/** An array of another class, which zod reads as any array. */
class Tagged extends Array<unknown> {}

/** An array with a hole before `value`. */
function sparse(value: unknown): unknown[] {
  const list: unknown[] = [];
  list[1] = value;
  return list;
}

describe('withQuickPath', () => {
  const schema = z.strictObject({ name: z.string().min(1), size: z.number().int() });
  const parser = withQuickPath(schema, {
    name: textTest(null, 1),
    size: (value) => Number.isInteger(value),
  });
  let asked: jest.SpyInstance;
  beforeEach(() => (asked = jest.spyOn(schema, 'safeParse')));
  afterEach(() => asked.mockRestore());

  it('takes a plain object of exactly the fields, each passing, as it is', () => {
    const input = { size: 3, name: 'a' };
    const result = parser.safeParse(input);
    expect(result).toEqual({ success: true, data: input });
    expect(result.success && result.data).toBe(input);
    expect(asked).not.toHaveBeenCalled();
  });

  it('takes an object without a prototype too', () => {
    const input = Object.assign(Object.create(null) as object, { name: 'a', size: 1 });
    expect(parser.safeParse(input).success).toBe(true);
    expect(asked).not.toHaveBeenCalled();
  });

  it.each([
    ['a field missing', { name: 'a' }],
    ['another field', { name: 'a', size: 1, colour: 'red' }],
    ['a field failing its test', { name: '', size: 1 }],
    ['a field of the wrong type', { name: 'a', size: '1' }],
    ['an array', ['a', 1]],
    ['null', null],
    ['a string', 'name'],
    [
      'an instance of a class',
      new (class Thing {
        name = 'a';
        size = 1;
      })(),
    ],
    ['an own __proto__ key', JSON.parse('{"name":"a","size":1,"__proto__":{"x":1}}')],
  ])('leaves %s to the schema, which words the error', (_, input) => {
    expect(parser.safeParse(input)).toEqual(schema.safeParse(input));
    expect(asked).toHaveBeenCalledWith(input);
  });
});

describe('withQuickPath with an optional field', () => {
  const schema = z.strictObject({ name: z.string().min(1), size: z.number().int().optional() });
  const parser = withQuickPath(
    schema,
    { name: textTest(null, 1), size: (value) => Number.isInteger(value) },
    ['size'],
  );
  let asked: jest.SpyInstance;
  beforeEach(() => (asked = jest.spyOn(schema, 'safeParse')));
  afterEach(() => asked.mockRestore());

  it.each([
    ['with it', { name: 'a', size: 1 }],
    ['without it', { name: 'a' }],
    ['with it undefined', { name: 'a', size: undefined }],
  ])('takes the object %s as it is', (_, input) => {
    const result = parser.safeParse(input);
    expect(result.success && result.data).toBe(input);
    expect(asked).not.toHaveBeenCalled();
  });

  it.each([
    ['the required field missing', { size: 1 }],
    ['the required field undefined', { name: undefined, size: 1 }],
    ['the optional field failing its test', { name: 'a', size: 1.5 }],
    ['another field', { name: 'a', colour: 'red' }],
  ])('leaves %s to the schema', (_, input) => {
    expect(parser.safeParse(input)).toEqual(schema.safeParse(input));
    expect(asked).toHaveBeenCalledWith(input);
  });
});

describe('rememberedTextTest', () => {
  const instant = z.iso.datetime({ offset: true });

  it('asks the schema once for a text that repeats', () => {
    const asked = jest.spyOn(instant, 'safeParse');
    const test = rememberedTextTest(instant);
    expect(test('2026-12-05T10:00:00.000Z')).toBe(true);
    expect(test('2026-12-05T10:00:00.000Z')).toBe(true);
    expect(asked).toHaveBeenCalledTimes(1);
    asked.mockRestore();
  });

  it('still refuses what the schema refuses, after a text it accepted', () => {
    const test = rememberedTextTest(instant);
    expect(test('2024-02-29T10:00:00.000Z')).toBe(true);
    expect(test('2023-02-29T10:00:00.000Z')).toBe(false);
    expect(test('2024-02-29T10:00:00.000Z')).toBe(true);
    expect(test(20240229)).toBe(false);
  });
});

describe('listTest', () => {
  const test = listTest(textTest(/^[a-z]+$/), 1, 2);

  it('takes a plain array of min to max items, each passing', () => {
    expect(test(['a'])).toBe(true);
    expect(test(['a', 'b'])).toBe(true);
    expect(test([])).toBe(false);
    expect(test(['a', 'b', 'c'])).toBe(false);
    expect(test(['a', 'B'])).toBe(false);
    expect(test('a')).toBe(false);
  });

  it('reads a hole as undefined, as zod does', () => {
    expect(test(sparse('a'))).toBe(false);
  });

  it('leaves an array of another class to the schema', () => {
    expect(test(Tagged.of('a'))).toBe(false);
  });
});

/**
 * Each quick parser against its schema: for every input, the same verdict and the same value, and
 * the form Hookbase writes takes the quick path. The inputs are the usual form with one or two
 * fields changed to values that sit on an edge of some rule, and a seeded random mix of those.
 */
type Case = Record<string, unknown>;

const edges: unknown[] = [
  undefined,
  null,
  0,
  1.5,
  true,
  '',
  ' ',
  'a',
  'A'.repeat(256),
  'A'.repeat(257),
  'order.created',
  'order created',
  '-order',
  'order/created:v1_x-y',
  'ordér.created',
  'x\u0000y',
  '\uD800',
  '\uDC00a',
  '\uD83D\uDE00',
  [],
  [1],
  {},
  { a: 1 },
  { 'x\u0000': 1 },
  { a: '\uD800' },
  { nested: { deeper: ['\u0000'] } },
  { nested: { deeper: ['\uD83D\uDE00'] } },
  newId('evt'),
  newId('org'),
  newId('msg'),
  newId('ep'),
  newId('evt').toUpperCase(),
  `${newId('evt')}x`,
  'evt_',
  '2026-12-05T10:00:00.000Z',
  '2026-12-05T10:00:00Z',
  '2026-12-05T10:00:00.123456Z',
  '2026-12-05T10:00:00.000+01:00',
  '2026-12-05T10:00:00.000',
  '2026-12-05 10:00:00.000Z',
  '2026-12-05T10:00:00.000z',
  '2026-13-05T10:00:00.000Z',
  '2026-02-29T10:00:00.000Z',
  '2024-02-29T10:00:00.000Z',
  '2026-12-05T24:00:00.000Z',
  'yesterday',
  // Lists, application references and keys, for the optional fields of an event.
  ['billing'],
  ['billing', 'orders.eu/v1'],
  Array(10).fill('c'),
  Array(11).fill('c'),
  ['bad channel'],
  [''],
  ['A'.repeat(128)],
  ['A'.repeat(129)],
  [newId('ep')],
  Array(100).fill(newId('ep')),
  Array(101).fill(newId('ep')),
  [newId('evt')],
  [newId('ep'), undefined],
  sparse(newId('ep')),
  Tagged.of('billing'),
  newId('app'),
  'acme-customer_1.eu:x',
  'app_notanid',
  '_acme',
  'order-1',
];

function cases(usual: () => Case, seed: number): Case[] {
  const fields = Object.keys(usual());
  const all: Case[] = [usual()];
  for (const field of fields) {
    for (const value of edges) all.push({ ...usual(), [field]: value });
    const without = usual();
    delete without[field];
    all.push(without);
  }
  for (const value of edges) all.push({ ...usual(), extra: value });
  // Two or three fields changed at once, from a fixed seed so that a failure can be replayed.
  let state = seed;
  const next = (n: number) => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state % n;
  };
  for (let i = 0; i < 500; i++) {
    const input = usual();
    for (let changes = 2 + next(2); changes > 0; changes--) {
      input[fields[next(fields.length)]] = edges[next(edges.length)];
    }
    all.push(input);
  }
  return all;
}

// The inputs are passed as they are: neither side changes them, and a copy by structuredClone
// would be an object of another realm under Jest, which never takes the quick path.
function expectSameAsSchema<T>(parser: Parser<T>, schema: z.ZodType<T>, inputs: Case[]): void {
  for (const input of inputs) {
    const quick = parser.safeParse(input);
    const full = schema.safeParse(input);
    expect({ input, success: quick.success }).toEqual({ input, success: full.success });
    if (quick.success && full.success) expect(quick.data).toEqual(full.data);
  }
}

/** A delivery record as the fan-out writes it without its payload. */
const deliveryWithoutPayload = (): Case => ({
  messageId: newId('msg'),
  eventId: newId('evt'),
  organizationId: newId('org'),
  endpointId: newId('ep'),
  eventType: 'order.created',
  acceptedAt: new Date().toISOString(),
});

const payload = () => ({
  id: 1,
  customer: { name: 'Ada', tags: ['a', 'b'] },
  note: 'x'.repeat(300),
});

/** An event with channels, an idempotency key and the endpoints it is for. */
const usualEvent = (): Case => ({
  eventType: 'order.created',
  payload: payload(),
  channels: ['billing', 'orders.eu'],
  idempotencyKey: 'order-1 \u00e9\uD83D\uDE00',
  endpointIds: [newId('ep'), newId('ep')],
});

describe.each([
  {
    name: 'publishEventParser',
    parser: publishEventParser as Parser<unknown>,
    schema: publishEventSchema as z.ZodType<unknown>,
    usual: (): Case => ({ eventType: 'order.created', payload: payload() }),
  },
  {
    name: 'publishEventParser, an event with every optional field',
    parser: publishEventParser as Parser<unknown>,
    schema: publishEventSchema as z.ZodType<unknown>,
    usual: (): Case => ({ ...usualEvent(), applicationId: 'acme-customer-1' }),
  },
  {
    name: 'publishEventParser, an event for an application named by its id',
    parser: publishEventParser as Parser<unknown>,
    schema: publishEventSchema as z.ZodType<unknown>,
    usual: (): Case => ({ ...usualEvent(), applicationId: newId('app') }),
  },
  {
    name: 'eventEnvelopeParser, an envelope with every optional field',
    parser: eventEnvelopeParser as Parser<unknown>,
    schema: eventEnvelopeSchema as z.ZodType<unknown>,
    usual: (): Case => ({
      id: newId('evt'),
      organizationId: newId('org'),
      ...usualEvent(),
      applicationId: newId('app'),
      acceptedAt: new Date().toISOString(),
    }),
  },
  {
    name: 'eventEnvelopeParser',
    parser: eventEnvelopeParser as Parser<unknown>,
    schema: eventEnvelopeSchema as z.ZodType<unknown>,
    usual: (): Case => ({
      id: newId('evt'),
      organizationId: newId('org'),
      eventType: 'order.created',
      payload: payload(),
      acceptedAt: new Date().toISOString(),
    }),
  },
  {
    name: 'deliveryRecordParser',
    parser: deliveryRecordParser as Parser<unknown>,
    schema: deliveryRecordSchema as z.ZodType<unknown>,
    usual: (): Case => ({ ...deliveryWithoutPayload(), payload: payload() }),
  },
  {
    name: 'deliveryRecordParser, a record without its payload',
    parser: deliveryRecordParser as Parser<unknown>,
    schema: deliveryRecordSchema as z.ZodType<unknown>,
    usual: deliveryWithoutPayload,
  },
])('$name', ({ parser, schema, usual }) => {
  it('takes the usual form without asking the schema', () => {
    const asked = jest.spyOn(schema, 'safeParse');
    const input = usual();
    expect(parser.safeParse(input)).toEqual({ success: true, data: input });
    expect(asked).not.toHaveBeenCalled();
    asked.mockRestore();
  });

  it('gives what the schema gives, for every edge of every field', () => {
    expectSameAsSchema(parser, schema, cases(usual, 20261205));
  });
});
