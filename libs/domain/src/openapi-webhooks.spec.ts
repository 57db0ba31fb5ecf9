import { compileEventTypeSchema } from './event-types';
import { readOpenApiWebhooks } from './openapi-webhooks';

const document = {
  openapi: '3.1.0',
  info: { title: 'Shop', version: '1' },
  webhooks: {
    'order.created': {
      post: {
        summary: 'An order was placed',
        requestBody: {
          content: {
            'application/json': {
              schema: { $ref: '#/components/schemas/Order' },
              examples: { small: { value: { id: 'o1', total: 3, customer: { id: 'c1' } } } },
            },
          },
        },
      },
    },
    'order.cancelled': {
      post: {
        deprecated: true,
        description: 'Cancelled',
        requestBody: {
          content: {
            'application/json': {
              schema: { type: 'object', properties: { id: { type: 'string' } } },
              example: { id: 'o1' },
            },
          },
        },
      },
    },
    ping: { post: {} },
  },
  components: {
    schemas: {
      Order: {
        type: 'object',
        required: ['id', 'total'],
        properties: {
          id: { type: 'string' },
          total: { type: 'number' },
          customer: { $ref: '#/components/schemas/Customer' },
        },
      },
      Customer: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } },
      Unused: { type: 'string' },
    },
  },
};

describe('readOpenApiWebhooks', () => {
  it('reads one type per webhook, carrying referenced components as $defs', () => {
    const { types, problems } = readOpenApiWebhooks(document);
    expect(problems).toEqual([]);
    expect(types.map((t) => [t.name, t.description, t.deprecated])).toEqual([
      ['order.created', 'An order was placed', false],
      ['order.cancelled', 'Cancelled', true],
      ['ping', '', false],
    ]);
    const created = types[0];
    expect(created.schema).toEqual({
      $ref: '#/$defs/Order',
      $defs: {
        Order: expect.objectContaining({
          properties: expect.objectContaining({ customer: { $ref: '#/$defs/Customer' } }),
        }),
        Customer: expect.any(Object),
      },
    });
    expect(created.example).toEqual({ id: 'o1', total: 3, customer: { id: 'c1' } });
    expect(types[1].example).toEqual({ id: 'o1' });
    expect(types[2]).toMatchObject({ schema: null, example: null });
    // The schema read compiles, and checks nested references.
    const compiled = compileEventTypeSchema(created.schema);
    expect(compiled.ok).toBe(true);
    if (!compiled.ok) return;
    expect(compiled.check(created.example)).toEqual([]);
    expect(compiled.check({ id: 'o', total: 1, customer: {} }).map((v) => v.pointer)).toEqual([
      '/customer',
    ]);
  });

  it('names what it cannot read', () => {
    expect(readOpenApiWebhooks(null).problems).toEqual([
      { pointer: '/', message: 'must be an OpenAPI document' },
    ]);
    expect(readOpenApiWebhooks({ openapi: '3.0.3', webhooks: {} }).problems).toEqual([
      { pointer: '/openapi', message: expect.stringContaining('3.1') },
      { pointer: '/webhooks', message: expect.any(String) },
    ]);
    const bad = readOpenApiWebhooks({
      openapi: '3.1.0',
      webhooks: {
        'bad name!': { post: {} },
        'a/b': 'nope',
        empty: {},
        external: {
          post: {
            requestBody: {
              content: { 'application/json': { schema: { $ref: 'https://x.test/s.json' } } },
            },
          },
        },
        missing: {
          post: {
            requestBody: {
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Nope' } } },
            },
          },
        },
      },
    });
    expect(bad.types).toEqual([]);
    expect(bad.problems.map((p) => p.pointer)).toEqual([
      '/webhooks/bad name!',
      '/webhooks/a~1b',
      '/webhooks/empty',
      '/webhooks/external/post/requestBody',
      '/webhooks/missing/post/requestBody',
    ]);
  });

  it('keeps a key named __proto__ as a plain key', () => {
    const parsed = JSON.parse(
      '{"openapi":"3.1.0","webhooks":{"x":{"post":{"requestBody":{"content":{"application/json":{"schema":{"type":"object","properties":{"__proto__":{"type":"string"}}}}}}}}}}',
    );
    const { types } = readOpenApiWebhooks(parsed);
    const properties = (types[0].schema as { properties: object }).properties;
    expect(Object.keys(properties)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(properties)).toBe(Object.prototype);
  });
});
