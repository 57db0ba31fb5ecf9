import { z } from 'zod';

/** A JSON object: not an array, not null. */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** What a value that should have been an object is, for an error message. */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'array' : typeof value;
}

/**
 * A JSON object with any members, taken as it is, for the largest values Hookbase validates
 * (event payloads, on every path they travel). A record schema checks and copies each key, which
 * cost about three times this check on a typical payload. `problem` answers what else is wrong
 * with an object (its message), or null. The API document shows the record it is.
 */
export function jsonObject(
  problem: (value: Record<string, unknown>) => string | null = () => null,
): z.ZodType<Record<string, unknown>> {
  // `unknown` refined, not `custom`: every JSON Schema rendering can show it (a custom type has
  // none of its own), and the key stays required.
  const schema = z
    .unknown()
    .refine((value) => isJsonObject(value) && problem(value) === null, {
      error: ({ input }) =>
        isJsonObject(input)
          ? (problem(input) ?? 'Invalid input')
          : `Invalid input: expected object, received ${kindOf(input)}`,
    })
    .meta({ type: 'object', propertyNames: { type: 'string' }, additionalProperties: {} });
  return schema as unknown as z.ZodType<Record<string, unknown>>;
}
