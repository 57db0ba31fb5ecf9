import { EVENT_TYPE_PATTERN } from './inputs';

/**
 * Reads event types out of an OpenAPI 3.1 document's `webhooks` section: one type per entry,
 * named by its key, its schema the JSON request body of the entry's operation (references to
 * `#/components/schemas/…` carried along as `$defs`), its description and deprecation from the
 * operation, its example from the media type's `example` or first `examples` value.
 */

export interface ImportedEventType {
  name: string;
  description: string;
  schema: Record<string, unknown> | boolean | null;
  example: Record<string, unknown> | null;
  deprecated: boolean;
}

export interface WebhooksReading {
  types: ImportedEventType[];
  /** Entries that could not be read, with why (the whole import is refused when any). */
  problems: { pointer: string; message: string }[];
}

const OPERATIONS = ['post', 'put', 'patch', 'get', 'delete', 'options', 'head', 'trace'] as const;
/** The most types one import may declare. */
export const MAX_IMPORTED_TYPES = 1_000;

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function readOpenApiWebhooks(document: unknown): WebhooksReading {
  const problems: WebhooksReading['problems'] = [];
  if (!isObject(document)) {
    return { types: [], problems: [{ pointer: '/', message: 'must be an OpenAPI document' }] };
  }
  if (typeof document.openapi !== 'string' || !document.openapi.startsWith('3.1')) {
    problems.push({ pointer: '/openapi', message: 'must be an OpenAPI 3.1 document (3.1.x)' });
  }
  const webhooks = document.webhooks;
  if (!isObject(webhooks) || Object.keys(webhooks).length === 0) {
    problems.push({ pointer: '/webhooks', message: 'must be an object with at least one entry' });
    return { types: [], problems };
  }
  const entries = Object.entries(webhooks);
  if (entries.length > MAX_IMPORTED_TYPES) {
    problems.push({ pointer: '/webhooks', message: `at most ${MAX_IMPORTED_TYPES} entries` });
    return { types: [], problems };
  }
  const components = isObject(document.components) ? document.components : {};
  const componentSchemas = isObject(components.schemas) ? components.schemas : {};
  const types: ImportedEventType[] = [];
  for (const [name, item] of entries) {
    const at = `/webhooks/${escapePointer(name)}`;
    if (name.length > 256 || !EVENT_TYPE_PATTERN.test(name)) {
      problems.push({
        pointer: at,
        message: 'the name is not an event type (letters, digits and _ . : - / only)',
      });
      continue;
    }
    if (!isObject(item)) {
      problems.push({ pointer: at, message: 'must be a path item object' });
      continue;
    }
    const method = OPERATIONS.find((m) => isObject(item[m]));
    if (!method) {
      problems.push({ pointer: at, message: 'has no operation' });
      continue;
    }
    const operation = item[method] as Json;
    const requestBody = isObject(operation.requestBody) ? operation.requestBody : {};
    const content = isObject(requestBody.content) ? requestBody.content : {};
    const media = isObject(content['application/json']) ? content['application/json'] : undefined;
    let schema: ImportedEventType['schema'] = null;
    if (media && (isObject(media.schema) || typeof media.schema === 'boolean')) {
      const withDefs = carryComponents(media.schema, componentSchemas);
      if (typeof withDefs === 'string') {
        problems.push({ pointer: `${at}/${method}/requestBody`, message: withDefs });
        continue;
      }
      schema = withDefs;
    }
    types.push({
      name,
      description: String(operation.summary ?? operation.description ?? item.summary ?? '').slice(
        0,
        2_000,
      ),
      schema,
      example: media ? exampleOf(media) : null,
      deprecated: operation.deprecated === true,
    });
  }
  return { types, problems };
}

function exampleOf(media: Json): Record<string, unknown> | null {
  if (isObject(media.example)) return media.example;
  if (isObject(media.examples)) {
    for (const example of Object.values(media.examples)) {
      if (isObject(example) && isObject(example.value)) return example.value;
    }
  }
  return null;
}

const COMPONENT_REF = '#/components/schemas/';

/**
 * The schema with each `#/components/schemas/X` reference rewritten to `#/$defs/X`, and those
 * components (and the ones they reference) under `$defs`; a message when a reference is external
 * or names a component that is not there.
 */
function carryComponents(
  schema: Json | boolean,
  components: Json,
): Record<string, unknown> | boolean | string {
  if (typeof schema === 'boolean') return schema;
  const needed = new Map<string, unknown>();
  const pending: string[] = [];
  let problem: string | undefined;
  const rewrite = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(rewrite);
    if (!isObject(value)) return value;
    const out: Json = {};
    for (const [key, inner] of Object.entries(value)) {
      let rewritten: unknown;
      if (key === '$ref' && typeof inner === 'string') {
        if (inner.startsWith(COMPONENT_REF)) {
          const encoded = inner.slice(COMPONENT_REF.length);
          const name = unescapePointer(encoded);
          if (!Object.hasOwn(components, name)) {
            problem ??= `references a missing component: ${inner}`;
          } else if (!needed.has(name)) {
            needed.set(name, undefined);
            pending.push(name);
          }
          rewritten = `#/$defs/${encoded}`;
        } else {
          if (!inner.startsWith('#')) {
            problem ??= `references outside the document are not followed: ${inner}`;
          }
          rewritten = inner;
        }
      } else {
        rewritten = rewrite(inner);
      }
      // Defined, not assigned: a key named __proto__ stays a plain key.
      Object.defineProperty(out, key, {
        value: rewritten,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  };
  const root = rewrite(schema) as Json;
  while (pending.length > 0) {
    const name = pending.shift()!;
    needed.set(name, rewrite(components[name]));
  }
  if (problem) return problem;
  if (needed.size === 0) return root;
  const defs = isObject(root.$defs) ? root.$defs : {};
  return { ...root, $defs: { ...defs, ...Object.fromEntries(needed) } };
}

function unescapePointer(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}
