import { DomainError } from './errors';
import {
  admitEvent,
  checkEventTypeDefinition,
  compileEventTypeSchema,
  DeclaredEventType,
  EVENT_TYPE_POLICIES,
  MAX_SCHEMA_BYTES,
} from './event-types';

const orderSchema = {
  type: 'object',
  required: ['id', 'total'],
  properties: {
    id: { type: 'string' },
    total: { type: 'number', minimum: 0 },
    lines: { type: 'array', items: { type: 'object', required: ['sku'] } },
  },
};

function compiled(schema: unknown) {
  const result = compileEventTypeSchema(schema);
  if (!result.ok) throw new Error(result.message);
  return result.check;
}

describe('compileEventTypeSchema', () => {
  it('reports each violation with its JSON pointer and keyword', () => {
    const check = compiled(orderSchema);
    expect(check({ id: 'o1', total: 3 })).toEqual([]);
    expect(check({ id: 7, total: -1, lines: [{ sku: 'a' }, {}] })).toEqual([
      { pointer: '/id', keyword: 'type', message: 'must be string' },
      { pointer: '/total', keyword: 'minimum', message: 'must be >= 0' },
      { pointer: '/lines/1', keyword: 'required', message: "must have required property 'sku'" },
    ]);
    expect(check({ total: 1 })).toEqual([
      { pointer: '/', keyword: 'required', message: "must have required property 'id'" },
    ]);
  });

  it('speaks 2020-12 (prefixItems, dependentRequired) and treats format as an annotation', () => {
    const check = compiled({
      type: 'object',
      properties: {
        pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'integer' }] },
        at: { type: 'string', format: 'date-time' },
      },
      dependentRequired: { card: ['cvv'] },
    });
    expect(check({ pair: ['a', 1], at: 'not a date' })).toEqual([]);
    expect(check({ pair: [1, 'a'] }).map((v) => [v.pointer, v.keyword])).toEqual([
      ['/pair/0', 'type'],
      ['/pair/1', 'type'],
    ]);
    expect(check({ card: 'x' }).map((v) => v.keyword)).toEqual(['dependentRequired']);
  });

  it('accepts unknown keywords (OpenAPI `example`) and boolean schemas', () => {
    expect(compileEventTypeSchema({ type: 'object', example: { a: 1 }, 'x-kind': 1 }).ok).toBe(
      true,
    );
    expect(compiled(true)({ any: 1 })).toEqual([]);
    expect(compiled(false)({}).map((v) => v.keyword)).toEqual(['false schema']);
  });

  it('refuses what is not a valid schema, a reference it cannot resolve, and an oversized one', () => {
    const invalid = compileEventTypeSchema({ type: 'objekt' });
    expect(invalid.ok).toBe(false);
    expect(!invalid.ok && invalid.violations.length).toBeGreaterThan(0);
    expect(compileEventTypeSchema({ $ref: 'https://example.com/s.json' }).ok).toBe(false);
    expect(compileEventTypeSchema([1]).ok).toBe(false);
    expect(compileEventTypeSchema('string').ok).toBe(false);
    const big = { description: 'x'.repeat(MAX_SCHEMA_BYTES) };
    expect(compileEventTypeSchema(big)).toMatchObject({ ok: false, message: /at most/ });
  });

  it('compiles schemas with the same $id again, each its own', () => {
    const first = compiled({ $id: 'https://example.com/order', type: 'object', required: ['a'] });
    const second = compiled({ $id: 'https://example.com/order', type: 'object', required: ['b'] });
    const again = compiled({ $id: 'https://example.com/order', type: 'object', required: ['a'] });
    expect(first({ a: 1 })).toEqual([]);
    expect(second({ a: 1 }).map((v) => v.message)).toEqual(["must have required property 'b'"]);
    expect(again({ a: 1 })).toEqual([]);
  });

  it('caps the violations reported', () => {
    const check = compiled({ type: 'array', items: { type: 'string' } });
    expect(check(Array.from({ length: 50 }, () => 1))).toHaveLength(20);
  });
});

describe('admitEvent', () => {
  const check = compiled(orderSchema);
  const entries: Record<string, DeclaredEventType | undefined> = {
    undeclared: undefined,
    archived: { archived: true, check },
    noSchema: { archived: false, check: null },
    withSchema: { archived: false, check },
  };
  const payloads = { valid: { id: 'o1', total: 2 }, invalid: { id: 1 } };

  // Every policy × entry × payload: the expected outcome.
  const expected: Record<string, string> = {
    'open undeclared valid': 'accepted',
    'open undeclared invalid': 'accepted',
    'open archived valid': 'accepted',
    'open archived invalid': 'accepted',
    'open noSchema valid': 'accepted',
    'open noSchema invalid': 'accepted',
    'open withSchema valid': 'accepted',
    'open withSchema invalid': 'accepted',
    'declared undeclared valid': 'EVENT_TYPE_UNKNOWN',
    'declared undeclared invalid': 'EVENT_TYPE_UNKNOWN',
    'declared archived valid': 'EVENT_TYPE_UNKNOWN',
    'declared archived invalid': 'EVENT_TYPE_UNKNOWN',
    'declared noSchema valid': 'accepted',
    'declared noSchema invalid': 'accepted',
    'declared withSchema valid': 'accepted',
    'declared withSchema invalid': 'accepted',
    'validated undeclared valid': 'EVENT_TYPE_UNKNOWN',
    'validated undeclared invalid': 'EVENT_TYPE_UNKNOWN',
    'validated archived valid': 'EVENT_TYPE_UNKNOWN',
    'validated archived invalid': 'EVENT_TYPE_UNKNOWN',
    'validated noSchema valid': 'accepted',
    'validated noSchema invalid': 'accepted',
    'validated withSchema valid': 'accepted',
    'validated withSchema invalid': 'PAYLOAD_INVALID',
  };

  for (const policy of EVENT_TYPE_POLICIES) {
    for (const [entryName, entry] of Object.entries(entries)) {
      for (const [payloadName, payload] of Object.entries(payloads)) {
        const name = `${policy} ${entryName} ${payloadName}`;
        it(`${name} → ${expected[name]}`, () => {
          const admission = admitEvent(policy, 'order.created', entry, payload);
          expect(admission.kind === 'accepted' ? 'accepted' : admission.code).toBe(expected[name]);
        });
      }
    }
  }

  it('names the violations of a refused payload', () => {
    expect(admitEvent('validated', 'order.created', entries.withSchema, { id: 1 })).toMatchObject({
      kind: 'refused',
      code: 'PAYLOAD_INVALID',
      details: {
        eventType: 'order.created',
        violations: [
          { pointer: '/', keyword: 'required' },
          { pointer: '/id', keyword: 'type' },
        ],
      },
    });
  });
});

describe('checkEventTypeDefinition', () => {
  it('accepts no schema, a schema with no example, and an example that conforms', () => {
    expect(() => checkEventTypeDefinition({ schema: null, example: { x: 1 } })).not.toThrow();
    expect(() => checkEventTypeDefinition({ schema: orderSchema, example: null })).not.toThrow();
    expect(() =>
      checkEventTypeDefinition({ schema: orderSchema, example: { id: 'a', total: 1 } }),
    ).not.toThrow();
  });

  it('refuses an invalid schema and an example that breaks the schema', () => {
    const codeOf = (run: () => void) => {
      try {
        run();
      } catch (error) {
        return [(error as DomainError).code, (error as DomainError).details];
      }
      return null;
    };
    expect(codeOf(() => checkEventTypeDefinition({ schema: { type: 3 }, example: null }))).toEqual([
      'SCHEMA_INVALID',
      expect.objectContaining({ violations: expect.any(Array) }),
    ]);
    expect(
      codeOf(() => checkEventTypeDefinition({ schema: orderSchema, example: { id: 'a' } })),
    ).toEqual([
      'EXAMPLE_INVALID',
      { violations: [{ pointer: '/', keyword: 'required', message: expect.any(String) }] },
    ]);
  });
});
