import { z } from 'zod';

/** What `parseInput` and `parseRecord` need of a schema: zod's `safeParse`. */
export interface Parser<T> {
  safeParse(input: unknown): z.ZodSafeParseResult<T>;
}

/** One field's rule, as a test of its value. */
export type FieldTest = (value: unknown) => boolean;

/**
 * `schema`, with a quick path in front of it for the one form of an object that arrives thousands
 * of times a second (an event as producers send it, a record as Hookbase writes it). An input
 * that is a plain object with exactly the `fields` named (those named in `optional` may be absent),
 * each passing its test, is taken as it is; anything else goes to `schema`, which decides and
 * words the errors. So the quick path may only ever accept what `schema` accepts, with the same
 * result: each test must be the field's rule in `schema` or stricter, and the field must have no
 * default or transform there; an optional field must be `.optional()` there. zod built a new
 * object, ran its checks through a context and allocated about 2 KB for each such input.
 */
export function withQuickPath<T>(
  schema: z.ZodType<T>,
  fields: Readonly<Record<string, FieldTest>>,
  optional: readonly string[] = [],
): Parser<T> {
  const names = Object.keys(fields);
  const tests = names.map((name) => {
    const test = fields[name];
    if (optional.includes(name)) return (value: unknown) => value === undefined || test(value);
    return (value: unknown) => value !== undefined && test(value);
  });
  const quick = (input: unknown): input is T => {
    if (input === null || typeof input !== 'object' || Array.isArray(input)) return false;
    const prototype: unknown = Object.getPrototypeOf(input);
    if (prototype !== Object.prototype && prototype !== null) return false;
    const object = input as Record<string, unknown>;
    for (const key in object) {
      if (!Object.prototype.hasOwnProperty.call(fields, key)) return false;
    }
    for (let i = 0; i < names.length; i++) {
      if (!tests[i](object[names[i]])) return false;
    }
    return true;
  };
  return {
    safeParse: (input) => (quick(input) ? { success: true, data: input } : schema.safeParse(input)),
  };
}

/** A string of `min` to `max` characters matching `pattern`, as zod's checks of one. */
export function textTest(pattern: RegExp | null, min = 0, max = Infinity): FieldTest {
  return (value) =>
    typeof value === 'string' &&
    value.length >= min &&
    value.length <= max &&
    (pattern === null || pattern.test(value));
}

/**
 * A string that `schema` accepts, asked of `schema` and remembered for the next value: the
 * texts it is used for (acceptance times, which ids share within a millisecond) repeat from one
 * record to the next.
 */
export function rememberedTextTest(schema: z.ZodType<string>): FieldTest {
  let last: string | undefined;
  return (value) => {
    if (typeof value !== 'string') return false;
    if (value === last) return true;
    if (!schema.safeParse(value).success) return false;
    last = value;
    return true;
  };
}

/**
 * A plain array of `min` to `max` items, each passing `item`, as zod's checks of a `z.array` of
 * that item. Holes count as `undefined` (zod reads each index), and an array of another class or
 * realm is left to the schema.
 */
export function listTest(item: FieldTest, min: number, max: number): FieldTest {
  return (value) => {
    if (!Array.isArray(value) || Object.getPrototypeOf(value) !== Array.prototype) return false;
    if (value.length < min || value.length > max) return false;
    for (let i = 0; i < value.length; i++) {
      if (!item(value[i])) return false;
    }
    return true;
  };
}
