import { canonicalJson } from './canonical-json';
import { DomainError } from './errors';

/**
 * Endpoint content filters (ADR 0034): a small Mongo-style query language over an event seen as
 * `{ eventType, channels, payload }`, parsed once into a predicate. A filter is an object whose
 * keys are dotted field paths (`payload.order.total`) or the logical operators `$and`, `$or`
 * (non-empty lists of filters) and `$not` (one filter); a field's condition is a value (equality)
 * or an object of operators: `$eq $ne $gt $gte $lt $lte $in $nin $exists`, and `$not` (a negated
 * object of operators). As in MongoDB, a condition on a field that holds a list holds when it
 * holds for one element (`{ "channels": "eu" }`), `$ne` and `$nin` when it holds for none.
 * Order comparisons compare numbers with numbers and strings with strings, else they are false.
 */

/** What a filter is evaluated against. */
export interface FilterSubject {
  eventType: string;
  channels: readonly string[];
  payload: unknown;
}

export type EventPredicate = (subject: FilterSubject) => boolean;

/** Bounds that keep a filter cheap to evaluate once per event and candidate endpoint. */
export const FILTER_LIMITS = Object.freeze({
  /** Serialized size of a filter, in characters of JSON. */
  maxBytes: 4_096,
  /** Conditions and operators, counted over the whole filter. */
  maxNodes: 64,
  /** Nesting of $and / $or / $not. */
  maxDepth: 6,
  /** Values in one $in / $nin list. */
  maxListValues: 100,
  /** Segments in one field path. */
  maxPathSegments: 12,
});

const FIELD_OPERATORS = new Set([
  '$eq',
  '$ne',
  '$gt',
  '$gte',
  '$lt',
  '$lte',
  '$in',
  '$nin',
  '$exists',
  '$not',
]);
const ROOTS = new Set(['eventType', 'channels', 'payload']);

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A filter refused, with the JSON pointer (into the filter) of what is wrong. */
export function filterError(pointer: string, message: string): DomainError {
  return new DomainError('FILTER_INVALID', `Invalid filter at ${pointer || '/'}: ${message}`, {
    pointer: pointer || '/',
    message,
  });
}

/** Parses and bounds a filter; throws FILTER_INVALID with the position of the first problem. */
export function compileFilter(filter: unknown): EventPredicate {
  if (!isObject(filter)) throw filterError('', 'a filter is a JSON object');
  const size = JSON.stringify(filter).length;
  if (size > FILTER_LIMITS.maxBytes) {
    throw filterError('', `a filter may be at most ${FILTER_LIMITS.maxBytes} bytes of JSON`);
  }
  const budget = { nodes: 0 };
  return compileObject(filter, '', 0, budget);
}

function count(budget: { nodes: number }, pointer: string): void {
  budget.nodes += 1;
  if (budget.nodes > FILTER_LIMITS.maxNodes) {
    throw filterError(pointer, `a filter may have at most ${FILTER_LIMITS.maxNodes} conditions`);
  }
}

function compileObject(
  filter: Json,
  pointer: string,
  depth: number,
  budget: { nodes: number },
): EventPredicate {
  if (depth > FILTER_LIMITS.maxDepth) {
    throw filterError(pointer, `filters nest at most ${FILTER_LIMITS.maxDepth} deep`);
  }
  const parts: EventPredicate[] = [];
  for (const [key, value] of Object.entries(filter)) {
    const at = `${pointer}/${escape(key)}`;
    count(budget, at);
    if (key === '$and' || key === '$or') {
      if (!Array.isArray(value) || value.length === 0) {
        throw filterError(at, `${key} takes a non-empty list of filters`);
      }
      const inner = value.map((item, index) => {
        if (!isObject(item)) throw filterError(`${at}/${index}`, 'must be a filter object');
        return compileObject(item, `${at}/${index}`, depth + 1, budget);
      });
      parts.push(
        key === '$and'
          ? (subject) => inner.every((p) => p(subject))
          : (subject) => inner.some((p) => p(subject)),
      );
    } else if (key === '$not') {
      if (!isObject(value)) throw filterError(at, '$not takes a filter object');
      const inner = compileObject(value, at, depth + 1, budget);
      parts.push((subject) => !inner(subject));
    } else if (key.startsWith('$')) {
      throw filterError(at, `unknown operator ${key} (top level: $and, $or, $not)`);
    } else {
      parts.push(compileField(key, value, at, budget));
    }
  }
  return (subject) => parts.every((p) => p(subject));
}

function compileField(
  path: string,
  condition: unknown,
  pointer: string,
  budget: { nodes: number },
): EventPredicate {
  const segments = path.split('.');
  if (!ROOTS.has(segments[0])) {
    throw filterError(pointer, 'a field path starts with eventType, channels or payload');
  }
  if (segments.length > FILTER_LIMITS.maxPathSegments || segments.some((s) => s === '')) {
    throw filterError(pointer, 'not a field path (dot-separated names, at most 12)');
  }
  const test = compileCondition(condition, pointer, budget);
  return (subject) => test(resolve(subject, segments));
}

/** A test of a field's value; `undefined` is a missing field. */
type ValueTest = (value: unknown) => boolean;

function compileCondition(
  condition: unknown,
  pointer: string,
  budget: { nodes: number },
): ValueTest {
  const isOperatorObject =
    isObject(condition) && Object.keys(condition).some((key) => key.startsWith('$'));
  if (!isOperatorObject) return equalsTest(condition);
  const tests = Object.entries(condition as Json).map(([operator, operand]): ValueTest => {
    const at = `${pointer}/${escape(operator)}`;
    count(budget, at);
    if (!FIELD_OPERATORS.has(operator)) {
      throw filterError(
        at,
        `unknown operator ${operator} (fields: ${[...FIELD_OPERATORS].join(' ')})`,
      );
    }
    switch (operator) {
      case '$eq':
        return equalsTest(operand);
      case '$ne': {
        const equals = equalsTest(operand);
        return (value) => !equals(value);
      }
      case '$gt':
      case '$gte':
      case '$lt':
      case '$lte':
        if (typeof operand !== 'number' && typeof operand !== 'string') {
          throw filterError(at, `${operator} compares with a number or a string`);
        }
        return orderTest(operator, operand);
      case '$in':
      case '$nin': {
        if (!Array.isArray(operand)) throw filterError(at, `${operator} takes a list of values`);
        if (operand.length > FILTER_LIMITS.maxListValues) {
          throw filterError(at, `${operator} takes at most ${FILTER_LIMITS.maxListValues} values`);
        }
        const tests = operand.map(equalsTest);
        const anyOf: ValueTest = (value) => tests.some((t) => t(value));
        return operator === '$in' ? anyOf : (value) => !anyOf(value);
      }
      case '$exists':
        if (typeof operand !== 'boolean') throw filterError(at, '$exists takes true or false');
        return (value) => (value !== undefined) === operand;
      case '$not': {
        if (!isObject(operand)) throw filterError(at, '$not takes an object of operators');
        const inner = compileCondition(
          Object.keys(operand).some((k) => k.startsWith('$')) ? operand : { $eq: operand },
          at,
          budget,
        );
        return (value) => !inner(value);
      }
      default:
        throw filterError(at, `unknown operator ${operator}`);
    }
  });
  return (value) => tests.every((test) => test(value));
}

/** Equality, element-wise on a list field (unless the list equals the operand as a whole). */
function equalsTest(operand: unknown): ValueTest {
  if (operand === null) return (value) => value === null || value === undefined;
  if (typeof operand !== 'object') {
    const scalar = (value: unknown) => value === operand;
    return (value) => scalar(value) || (Array.isArray(value) && value.some(scalar));
  }
  const expected = canonicalJson(operand);
  const whole = (value: unknown) =>
    value !== undefined && typeof value === 'object' && canonicalJson(value) === expected;
  return (value) => whole(value) || (Array.isArray(value) && value.some(whole));
}

function orderTest(operator: '$gt' | '$gte' | '$lt' | '$lte', operand: number | string): ValueTest {
  const compare = (value: unknown): boolean => {
    if (typeof value !== typeof operand) return false;
    const v = value as number | string;
    switch (operator) {
      case '$gt':
        return v > operand;
      case '$gte':
        return v >= operand;
      case '$lt':
        return v < operand;
      case '$lte':
        return v <= operand;
    }
  };
  return (value) => compare(value) || (Array.isArray(value) && value.some(compare));
}

/** The value at a path; `undefined` when a segment is missing. List indexes are numbers. */
function resolve(subject: FilterSubject, segments: readonly string[]): unknown {
  let value: unknown = subject;
  for (const segment of segments) {
    if (Array.isArray(value) && /^\d+$/.test(segment)) value = value[Number(segment)];
    else if (isObject(value) && Object.hasOwn(value, segment)) value = value[segment];
    else return undefined;
  }
  return value;
}

function escape(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}
