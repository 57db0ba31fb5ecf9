import { z } from 'zod';
import { DomainError } from './errors';
import { newId } from './ids';
import {
  createEndpointSchema,
  eventQuerySchema,
  messageQuerySchema,
  parseInput,
  publishEventSchema,
} from './inputs';

function validationIssues(run: () => unknown) {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('VALIDATION_FAILED');
    return (error as DomainError).details as { issues: { path: string }[] };
  }
  throw new Error('expected a validation error');
}

describe('publishEventSchema', () => {
  it('accepts a minimal event', () => {
    expect(
      parseInput(publishEventSchema, { eventType: 'order.created', payload: { id: 1 } }),
    ).toEqual({ eventType: 'order.created', payload: { id: 1 } });
  });

  it('accepts endpoint ids and an idempotency key', () => {
    const ep = newId('ep');
    const input = { eventType: 'a', payload: {}, idempotencyKey: 'k-1', endpointIds: [ep] };
    expect(parseInput(publishEventSchema, input)).toEqual(input);
  });

  it.each([
    [{ payload: {} }, 'eventType'],
    [{ eventType: 'a' }, 'payload'],
    [{ eventType: 42, payload: {} }, 'eventType'],
    [{ eventType: 'has space', payload: {} }, 'eventType'],
    [{ eventType: 'x'.repeat(257), payload: {} }, 'eventType'],
    [{ eventType: 'a', payload: [1, 2] }, 'payload'],
    [{ eventType: 'a', payload: 'text' }, 'payload'],
    [{ eventType: 'a', payload: {}, idempotencyKey: '' }, 'idempotencyKey'],
    [{ eventType: 'a', payload: {}, endpointIds: ['nope'] }, 'endpointIds.0'],
    [{ eventType: 'a', payload: {}, extra: true }, '(body)'],
    [{ eventType: 'a', payload: { text: 'nul\u0000' } }, 'payload'],
    [{ eventType: 'a', payload: { ['k\u0000']: 1 } }, 'payload'],
    [{ eventType: 'a', payload: { s: '\uD83D' } }, 'payload'],
    [{ eventType: 'a', payload: {}, idempotencyKey: 'k\u0000' }, 'idempotencyKey'],
  ])('rejects %j at %s', (input, path) => {
    const details = validationIssues(() => parseInput(publishEventSchema, input));
    expect(details.issues.map((issue) => issue.path)).toContain(path);
  });

  it('rejects a body that is not an object', () => {
    for (const body of [null, undefined, 'x', 3, []]) {
      validationIssues(() => parseInput(publishEventSchema, body));
    }
  });

  it.each([
    [[1, 2], 'array'],
    ['text', 'string'],
    [null, 'null'],
    [7, 'number'],
    [undefined, 'undefined'],
  ])('says what a payload of %j is instead of an object', (payload, kind) => {
    const details = validationIssues(() =>
      parseInput(publishEventSchema, { eventType: 'a', payload }),
    );
    expect(details.issues).toContainEqual({
      path: 'payload',
      message: `Invalid input: expected object, received ${kind}`,
    });
  });

  it('names where in the payload the unstorable text is', () => {
    const details = validationIssues(() =>
      parseInput(publishEventSchema, {
        eventType: 'a',
        payload: { customer: { names: ['ok', 'nul\u0000'] } },
      }),
    );
    expect(details.issues).toEqual([
      {
        path: 'payload',
        message:
          'customer.names[1] contains U+0000 or an unpaired surrogate, which cannot be stored',
      },
    ]);
  });

  it('takes the payload as it is, nested values included, without copying it', () => {
    const payload = { id: 'ord_1', customer: { id: 'c1' }, items: [{ sku: 'a' }], note: null };
    const input = parseInput(publishEventSchema, { eventType: 'a', payload });
    expect(input.payload).toBe(payload);
    expect(input.payload).toEqual({
      id: 'ord_1',
      customer: { id: 'c1' },
      items: [{ sku: 'a' }],
      note: null,
    });
  });

  it('is a JSON object with string keys in the API document', () => {
    const schema = z.toJSONSchema(publishEventSchema, { io: 'input', unrepresentable: 'any' });
    expect(schema.properties?.payload).toEqual({
      type: 'object',
      propertyNames: { type: 'string' },
      additionalProperties: {},
    });
  });
});

describe('createEndpointSchema', () => {
  it('defaults the kind to http', () => {
    expect(parseInput(createEndpointSchema, { url: 'https://example.com/hook' }).kind).toBe('http');
  });

  it('rejects unknown kinds and statuses', () => {
    validationIssues(() => parseInput(createEndpointSchema, { kind: 'ftp' }));
    validationIssues(() => parseInput(createEndpointSchema, { status: 'deleted' }));
  });
});

describe('eventQuerySchema', () => {
  it('takes an application (id or uid), a type and an acceptance window, paged', () => {
    expect(
      parseInput(eventQuerySchema, {
        applicationId: 'cust-1',
        eventType: 'order.created',
        createdAfter: '2026-01-01T00:00:00Z',
        createdBefore: '2026-01-02T00:00:00Z',
        limit: '10',
        cursor: 'evt_1',
      }),
    ).toEqual({
      applicationId: 'cust-1',
      eventType: 'order.created',
      createdAfter: '2026-01-01T00:00:00Z',
      createdBefore: '2026-01-02T00:00:00Z',
      limit: 10,
      cursor: 'evt_1',
    });
    expect(parseInput(eventQuerySchema, {})).toEqual({ limit: 50 });
  });

  it.each([
    [{ applicationId: 'has space' }, 'applicationId'],
    [{ createdAfter: 'yesterday' }, 'createdAfter'],
    [
      { createdAfter: '2026-01-02T00:00:00Z', createdBefore: '2026-01-01T00:00:00Z' },
      'createdBefore',
    ],
    [{ limit: '0' }, 'limit'],
    [{ limit: '251' }, 'limit'],
  ])('refuses %p (%s)', (query, path) => {
    expect(validationIssues(() => parseInput(eventQuerySchema, query)).issues).toEqual([
      expect.objectContaining({ path }),
    ]);
  });
});

describe('messageQuerySchema', () => {
  it('accepts a time window with offsets', () => {
    expect(
      parseInput(messageQuerySchema, {
        createdAfter: '2026-01-01T00:00:00Z',
        createdBefore: '2026-01-01T02:00:00+01:00',
      }),
    ).toMatchObject({
      createdAfter: '2026-01-01T00:00:00Z',
      createdBefore: '2026-01-01T02:00:00+01:00',
    });
  });

  it('names the field that is not an ISO 8601 timestamp', () => {
    expect(
      validationIssues(() => parseInput(messageQuerySchema, { createdAfter: 'yesterday' })).issues,
    ).toEqual([expect.objectContaining({ path: 'createdAfter' })]);
    expect(
      validationIssues(() => parseInput(messageQuerySchema, { createdBefore: '1700000000' }))
        .issues,
    ).toEqual([expect.objectContaining({ path: 'createdBefore' })]);
  });

  it('accepts any offset ISO 8601 allows, and refuses an instant outside the years 1 to 9999', () => {
    expect(() =>
      parseInput(messageQuerySchema, { createdAfter: '1209-02-04T15:45:38+18:26' }),
    ).not.toThrow();
    // 0000-01-01T00:00+01:00 is an instant in the year -1.
    expect(
      validationIssues(() =>
        parseInput(messageQuerySchema, { createdBefore: '0000-01-01T00:00:00+01:00' }),
      ).issues,
    ).toEqual([expect.objectContaining({ path: 'createdBefore' })]);
  });

  it('refuses a window that ends before it starts, comparing instants not text', () => {
    expect(
      validationIssues(() =>
        parseInput(messageQuerySchema, {
          createdAfter: '2026-01-01T00:00:01Z',
          createdBefore: '2026-01-01T00:00:00Z',
        }),
      ).issues,
    ).toEqual([expect.objectContaining({ path: 'createdBefore' })]);
    // 01:00+01:00 is 00:00Z: an empty window, not a reversed one.
    expect(() =>
      parseInput(messageQuerySchema, {
        createdAfter: '2026-01-01T00:00:00Z',
        createdBefore: '2026-01-01T01:00:00+01:00',
      }),
    ).not.toThrow();
  });
});
