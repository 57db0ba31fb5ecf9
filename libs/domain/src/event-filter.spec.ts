import { DomainError } from './errors';
import { compileFilter, FILTER_LIMITS, FilterSubject } from './event-filter';

const subject: FilterSubject = {
  eventType: 'order.created',
  channels: ['eu', 'vip'],
  payload: {
    total: 120,
    currency: 'EUR',
    status: 'paid',
    customer: { id: 'c1', tier: 'gold', tags: ['b2b', 'early'] },
    lines: [
      { sku: 'a', qty: 1 },
      { sku: 'b', qty: 3 },
    ],
    note: null,
  },
};
const matches = (filter: unknown, on: FilterSubject = subject) => compileFilter(filter)(on);

function refusal(filter: unknown): { pointer: string; message: string } {
  try {
    compileFilter(filter);
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('FILTER_INVALID');
    return (error as DomainError).details as { pointer: string; message: string };
  }
  throw new Error('the filter was accepted');
}

describe('compileFilter: matching', () => {
  it.each([
    [{}, true],
    [{ eventType: 'order.created' }, true],
    [{ eventType: 'order.paid' }, false],
    [{ 'payload.status': 'paid' }, true],
    [{ 'payload.status': { $eq: 'paid' } }, true],
    [{ 'payload.status': { $ne: 'paid' } }, false],
    [{ 'payload.total': { $gt: 100 } }, true],
    [{ 'payload.total': { $gt: 120 } }, false],
    [{ 'payload.total': { $gte: 120, $lt: 200 } }, true],
    [{ 'payload.total': { $lte: 119 } }, false],
    [{ 'payload.total': { $gt: '100' } }, false],
    [{ 'payload.currency': { $gte: 'EUR' } }, true],
    [{ 'payload.currency': { $in: ['USD', 'EUR'] } }, true],
    [{ 'payload.currency': { $nin: ['USD', 'EUR'] } }, false],
    [{ 'payload.missing': { $exists: false } }, true],
    [{ 'payload.missing': { $exists: true } }, false],
    [{ 'payload.note': { $exists: true } }, true],
    [{ 'payload.note': null }, true],
    [{ 'payload.missing': null }, true],
    [{ 'payload.customer.tier': 'gold' }, true],
    [{ 'payload.customer': { id: 'c1', tier: 'gold', tags: ['b2b', 'early'] } }, true],
    [{ 'payload.customer': { id: 'c1' } }, false],
    [{ 'payload.customer.tags': 'b2b' }, true],
    [{ 'payload.customer.tags': ['b2b', 'early'] }, true],
    [{ 'payload.customer.tags': { $nin: ['b2c'] } }, true],
    [{ 'payload.customer.tags': { $ne: 'b2b' } }, false],
    [{ 'payload.lines.sku': 'b' }, false],
    [{ 'payload.lines.1.sku': 'b' }, true],
    [{ 'payload.lines.qty': { $gt: 2 } }, false],
    [{ 'payload.lines': { sku: 'a', qty: 1 } }, true],
    [{ channels: 'eu' }, true],
    [{ channels: { $in: ['us', 'vip'] } }, true],
    [{ channels: { $nin: ['eu'] } }, false],
    [{ $and: [{ 'payload.status': 'paid' }, { 'payload.total': { $gt: 100 } }] }, true],
    [{ $and: [{ 'payload.status': 'paid' }, { 'payload.total': { $gt: 500 } }] }, false],
    [{ $or: [{ 'payload.status': 'void' }, { channels: 'vip' }] }, true],
    [{ $or: [{ 'payload.status': 'void' }, { channels: 'us' }] }, false],
    [{ $not: { 'payload.status': 'void' } }, true],
    [{ $not: { channels: 'eu' } }, false],
    [{ 'payload.total': { $not: { $gt: 200 } } }, true],
    [{ 'payload.total': { $not: { $gt: 100 } } }, false],
    [{ 'payload.status': 'paid', 'payload.total': { $lt: 100 } }, false],
  ])('%j → %s', (filter, expected) => {
    expect(matches(filter)).toBe(expected);
  });

  it('does not read inherited properties of the payload', () => {
    expect(matches({ 'payload.constructor': { $exists: true } })).toBe(false);
    expect(matches({ 'payload.toString': { $exists: true } })).toBe(false);
  });
});

describe('compileFilter: refusals name the position', () => {
  it.each([
    [[], '/', 'a filter is a JSON object'],
    [{ status: 'paid' }, '/status', 'starts with eventType, channels or payload'],
    [{ 'payload..x': 1 }, '/payload..x', 'not a field path'],
    [{ $nor: [] }, '/$nor', 'unknown operator $nor'],
    [{ $and: [] }, '/$and', 'non-empty list'],
    [{ $and: [{ 'payload.a': 1 }, 3] }, '/$and/1', 'must be a filter object'],
    [{ $or: [{ 'payload.a': { $regex: 'x' } }] }, '/$or/0/payload.a/$regex', 'unknown operator'],
    [{ 'payload.a': { $gt: {} } }, '/payload.a/$gt', 'number or a string'],
    [{ 'payload.a': { $in: 'x' } }, '/payload.a/$in', 'list of values'],
    [{ 'payload.a': { $exists: 1 } }, '/payload.a/$exists', 'true or false'],
    [{ $not: [1] }, '/$not', 'filter object'],
    [{ 'payload.a/b': { $gt: null } }, '/payload.a~1b/$gt', 'number or a string'],
  ])('%j is refused at %s', (filter, pointer, message) => {
    const { pointer: at, message: why } = refusal(filter);
    expect(at).toBe(pointer);
    expect(why).toContain(message);
  });

  it('bounds size, conditions, nesting and lists', () => {
    expect(refusal({ 'payload.a': 'x'.repeat(FILTER_LIMITS.maxBytes) }).message).toMatch(
      /at most 4096 bytes/,
    );
    const many = Object.fromEntries(
      Array.from({ length: FILTER_LIMITS.maxNodes + 1 }, (_, i) => [`payload.f${i}`, i]),
    );
    expect(refusal(many)).toEqual({
      pointer: `/payload.f${FILTER_LIMITS.maxNodes}`,
      message: expect.stringContaining('at most 64 conditions'),
    });
    let deep: Record<string, unknown> = { 'payload.a': 1 };
    for (let i = 0; i <= FILTER_LIMITS.maxDepth; i++) deep = { $not: deep };
    expect(refusal(deep).message).toMatch(/nest at most/);
    expect(
      refusal({ 'payload.a': { $in: Array.from({ length: 101 }, (_, i) => i) } }).message,
    ).toMatch(/at most 100 values/);
    const longPath = `payload.${Array.from({ length: 12 }, () => 'a').join('.')}`;
    expect(refusal({ [longPath]: 1 }).message).toMatch(/at most 12/);
  });
});
