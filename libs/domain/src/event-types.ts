import Ajv2020, { type ErrorObject } from 'ajv/dist/2020';
import { z } from 'zod';
import { DomainError } from './errors';
import { EVENT_TYPE_PATTERN } from './inputs';
import { unstorableTextAt } from './storable-text';

/**
 * The event type catalog: an organization's declared types with their JSON Schemas (2020-12),
 * and the policy that decides what a publish of a type must satisfy (ADR 0031).
 */

/**
 * `open`: any type is accepted (the catalog is documentation); `declared`: the type must be in
 * the catalog and not archived; `validated`: also, the payload must satisfy the type's schema.
 */
export const EVENT_TYPE_POLICIES = ['open', 'declared', 'validated'] as const;
export type EventTypePolicy = (typeof EVENT_TYPE_POLICIES)[number];

/** A schema larger than this (as JSON) is refused: it is compiled in every ingest process. */
export const MAX_SCHEMA_BYTES = 64 * 1024;
/** A refused payload reports at most this many violations. */
export const MAX_REPORTED_VIOLATIONS = 20;

/** One way a payload breaks its schema: where (a JSON pointer into the payload), and which rule. */
export interface SchemaViolation {
  pointer: string;
  keyword: string;
  message: string;
}

/** A compiled schema: the violations of a payload, none when it conforms. */
export type PayloadCheck = (payload: unknown) => SchemaViolation[];

export type SchemaCompilation =
  { ok: true; check: PayloadCheck } | { ok: false; message: string; violations: SchemaViolation[] };

/**
 * Compiles a JSON Schema (2020-12) into a check. `format` is an annotation only (the 2020-12
 * default), unknown keywords are allowed (OpenAPI documents carry `example` and vendor keys), and
 * no `$ref` is fetched: a reference must resolve inside the schema.
 */
export function compileEventTypeSchema(schema: unknown): SchemaCompilation {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    if (typeof schema !== 'boolean') {
      return { ok: false, message: 'A schema is a JSON object or a boolean', violations: [] };
    }
  }
  if (JSON.stringify(schema).length > MAX_SCHEMA_BYTES) {
    return {
      ok: false,
      message: `A schema may be at most ${MAX_SCHEMA_BYTES} bytes of JSON`,
      violations: [],
    };
  }
  const ajv = sharedAjv();
  if (!ajv.validateSchema(schema as object)) {
    const violations = toViolations(ajv.errors ?? []);
    return {
      ok: false,
      message: `Not a valid JSON Schema (2020-12): ${describe(violations)}`,
      violations,
    };
  }
  try {
    const validate = ajv.compile(schema as object);
    return {
      ok: true,
      check: (payload) => (validate(payload) ? [] : toViolations(validate.errors ?? [])),
    };
  } catch (error) {
    return {
      ok: false,
      message: `The schema cannot be compiled: ${(error as Error).message}`,
      violations: [],
    };
  } finally {
    // The compiled function keeps what it needs; the instance forgets the schema, so schemas
    // neither pile up in it nor clash by `$id`.
    if (typeof schema === 'object') ajv.removeSchema(schema as object);
  }
}

let ajvInstance: Ajv2020 | undefined;
/** One Ajv for every compile: building one compiles the 2020-12 meta-schema (tens of ms). */
function sharedAjv(): Ajv2020 {
  ajvInstance ??= new Ajv2020({
    allErrors: true,
    strict: false,
    validateFormats: false,
    logger: false,
  });
  return ajvInstance;
}

function toViolations(errors: readonly ErrorObject[]): SchemaViolation[] {
  return errors.slice(0, MAX_REPORTED_VIOLATIONS).map((error) => ({
    pointer: error.instancePath === '' ? '/' : error.instancePath,
    keyword: error.keyword,
    message: error.message ?? error.keyword,
  }));
}

function describe(violations: readonly SchemaViolation[]): string {
  return violations.map((v) => `${v.pointer} ${v.message}`).join('; ');
}

/** What the publish check needs of a catalog entry. */
export interface DeclaredEventType {
  archived: boolean;
  /** The compiled schema; null when the type has none (any payload conforms). */
  check: PayloadCheck | null;
}

export type EventAdmission =
  | { kind: 'accepted' }
  | {
      kind: 'refused';
      code: 'EVENT_TYPE_UNKNOWN' | 'PAYLOAD_INVALID';
      message: string;
      details: unknown;
    };

/**
 * Whether an organization with `policy` accepts an event of `eventType` with `payload`, given the
 * type's catalog entry (undefined when not declared).
 */
export function admitEvent(
  policy: EventTypePolicy,
  eventType: string,
  declared: DeclaredEventType | undefined,
  payload: unknown,
): EventAdmission {
  switch (policy) {
    case 'open':
      return { kind: 'accepted' };
    case 'declared':
    case 'validated': {
      if (!declared || declared.archived) {
        return {
          kind: 'refused',
          code: 'EVENT_TYPE_UNKNOWN',
          message: declared
            ? `Event type ${eventType} is archived`
            : `Event type ${eventType} is not in the organization's catalog`,
          details: { eventType, archived: Boolean(declared?.archived) },
        };
      }
      if (policy === 'declared' || declared.check === null) return { kind: 'accepted' };
      const violations = declared.check(payload);
      if (violations.length === 0) return { kind: 'accepted' };
      return {
        kind: 'refused',
        code: 'PAYLOAD_INVALID',
        message: `The payload does not match the schema of ${eventType}: ${describe(violations)}`,
        details: { eventType, violations },
      };
    }
    default:
      return unreachable(policy);
  }
}

/** The refusal as the error the edges map (400 with the code and details). */
export function admissionError(
  admission: Extract<EventAdmission, { kind: 'refused' }>,
): DomainError {
  return new DomainError(admission.code, admission.message, admission.details);
}

function unreachable(value: never): never {
  throw new Error(`unexpected event type policy ${String(value)}`);
}

const eventTypeName = z
  .string()
  .min(1)
  .max(256)
  .regex(EVENT_TYPE_PATTERN, 'letters, digits and _ . : - / only');

/** A value PostgreSQL can store: no U+0000 nor unpaired surrogate in any key or string. */
function storable<T extends z.ZodType>(schema: T) {
  return schema.superRefine((value, context) => {
    const at = unstorableTextAt(value);
    if (at !== null) {
      context.addIssue({
        code: 'custom',
        message: `${at} contains U+0000 or an unpaired surrogate, which cannot be stored`,
      });
    }
  });
}

const eventTypeFields = {
  description: storable(z.string().max(2_000)).optional(),
  schema: storable(z.union([z.record(z.string(), z.unknown()), z.boolean()]))
    .nullable()
    .optional(),
  example: storable(z.record(z.string(), z.unknown())).nullable().optional(),
  deprecated: z.boolean().optional(),
  archived: z.boolean().optional(),
};

export const createEventTypeSchema = z.strictObject({ name: eventTypeName, ...eventTypeFields });
export type CreateEventTypeInput = z.infer<typeof createEventTypeSchema>;

export const updateEventTypeSchema = z.strictObject(eventTypeFields);
export type UpdateEventTypeInput = z.infer<typeof updateEventTypeSchema>;

export const eventTypePolicySchema = z.strictObject({
  eventTypePolicy: z.enum(EVENT_TYPE_POLICIES),
});

/** Whether a name can be an event type at all (a path parameter that cannot is simply not found). */
export function isEventTypeName(name: string): boolean {
  return name.length > 0 && name.length <= 256 && EVENT_TYPE_PATTERN.test(name);
}

/**
 * Checks a type's schema and example together, as they are about to be saved: a schema that is
 * not a valid 2020-12 schema is SCHEMA_INVALID, an example that breaks it EXAMPLE_INVALID (with
 * each violation's pointer and keyword).
 */
export function checkEventTypeDefinition(definition: { schema: unknown; example: unknown }): void {
  if (definition.schema === null || definition.schema === undefined) return;
  const compiled = compileEventTypeSchema(definition.schema);
  if (!compiled.ok) {
    throw new DomainError('SCHEMA_INVALID', compiled.message, { violations: compiled.violations });
  }
  if (definition.example === null || definition.example === undefined) return;
  const violations = compiled.check(definition.example);
  if (violations.length > 0) {
    throw new DomainError(
      'EXAMPLE_INVALID',
      `The example does not match the schema: ${describe(violations)}`,
      { violations },
    );
  }
}
