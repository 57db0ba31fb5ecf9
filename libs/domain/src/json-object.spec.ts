import { z } from 'zod';
import { isJsonObject, jsonObject } from './json-object';

describe('isJsonObject', () => {
  it.each([[{}], [{ a: 1 }], [Object.create(null)]])('takes %j', (value) => {
    expect(isJsonObject(value)).toBe(true);
  });

  it.each([[null], [undefined], [[]], [[{}]], ['{}'], [0], [true]])('refuses %j', (value) => {
    expect(isJsonObject(value)).toBe(false);
  });
});

describe('jsonObject', () => {
  const issuesOf = (schema: z.ZodType, value: unknown) => {
    const result = schema.safeParse(value);
    if (result.success) throw new Error('expected a refusal');
    return result.error.issues.map(({ message }) => message);
  };

  it('answers the object given, not a copy', () => {
    const value = { a: { b: [1, 2] }, c: null };
    expect(jsonObject().parse(value)).toBe(value);
  });

  it.each([
    [null, 'null'],
    [undefined, 'undefined'],
    [[1], 'array'],
    ['x', 'string'],
    [1, 'number'],
    [false, 'boolean'],
  ])('says what %j is instead of an object', (value, kind) => {
    expect(issuesOf(jsonObject(), value)).toEqual([
      `Invalid input: expected object, received ${kind}`,
    ]);
  });

  it("refuses an object with a problem, in the problem's words", () => {
    const noSecrets = jsonObject((value) => ('secret' in value ? 'must not hold a secret' : null));
    expect(noSecrets.parse({ open: 1 })).toEqual({ open: 1 });
    expect(issuesOf(noSecrets, { secret: 1 })).toEqual(['must not hold a secret']);
  });

  it('does not ask about the problem of what is not an object', () => {
    const problem = jest.fn(() => null);
    issuesOf(jsonObject(problem), [1]);
    expect(problem).not.toHaveBeenCalled();
  });

  it('is a required object with string keys and any members in JSON Schema', () => {
    const schema = z.toJSONSchema(z.object({ value: jsonObject() }));
    expect(schema.properties?.value).toEqual({
      type: 'object',
      propertyNames: { type: 'string' },
      additionalProperties: {},
    });
    expect(schema.required).toEqual(['value']);
  });

  it('is required in an object', () => {
    expect(issuesOf(z.object({ value: jsonObject() }), {})).toEqual([
      'Invalid input: expected object, received undefined',
    ]);
  });
});
