// PostgreSQL text and jsonb cannot hold U+0000, and jsonb refuses unpaired UTF-16 surrogates.
// An event carrying either would be accepted onto Kafka and then fail at every attempt to record
// it, stalling its partition: such input is refused at the door instead.
// eslint-disable-next-line no-control-regex -- matching U+0000 is the point
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Whether PostgreSQL can store the text. Two native checks instead of the pattern above: a search
 * for U+0000 and `isWellFormed` (no unpaired surrogate), which answers at once for text without
 * any character past U+00FF. Every string of every published payload goes through here; the
 * pattern took 20 times as long on a 350-character ASCII text.
 */
export function isStorableText(text: string): boolean {
  return text.indexOf('\u0000') === -1 && text.isWellFormed();
}

/** The text with every unstorable character replaced by U+FFFD, for keeping excerpts of bad input. */
export function toStorableText(text: string): string {
  return text.replace(new RegExp(UNSTORABLE.source, 'g'), '\uFFFD');
}

interface Pending {
  value: unknown;
  /** Where it sits: the path is spelled out only for the value that fails. */
  parent: Pending | null;
  step: string | number;
}

function pathOf(entry: Pending): string {
  let path = '';
  for (let at: Pending | null = entry; at?.parent; at = at.parent) {
    path =
      typeof at.step === 'number'
        ? `[${at.step}]${path}`
        : `${at.parent.parent ? '.' : ''}${at.step}${path}`;
  }
  return path;
}

/**
 * The path of the first string (object key or value) in a JSON value that PostgreSQL cannot
 * store, or null when every one can. Iterative, so deeply nested input cannot overflow the stack.
 */
export function unstorableTextAt(value: unknown): string | null {
  const pending: Pending[] = [{ value, parent: null, step: '' }];
  while (pending.length > 0) {
    const entry = pending.pop()!;
    const current = entry.value;
    if (typeof current === 'string') {
      if (!isStorableText(current)) return pathOf(entry) || '(value)';
    } else if (Array.isArray(current)) {
      for (let index = 0; index < current.length; index++)
        pending.push({ value: current[index], parent: entry, step: index });
    } else if (current !== null && typeof current === 'object') {
      for (const key in current) {
        if (!Object.prototype.hasOwnProperty.call(current, key)) continue;
        if (!isStorableText(key)) return `${pathOf(entry) || '(value)'} (a key)`;
        pending.push({
          value: (current as Record<string, unknown>)[key],
          parent: entry,
          step: key,
        });
      }
    }
  }
  return null;
}

/**
 * Whether JSON text, once parsed, can hold a string that PostgreSQL cannot store. Valid JSON
 * cannot carry U+0000 or a control character unescaped, and UTF-8 cannot encode a lone
 * surrogate, so both can only come from a `\u` escape: text without one parses into storable
 * strings only, and the walk of `unstorableTextAt` can be skipped. Text with one may still be
 * fine (`\u00e9`); this answers only "no escape, nothing to check".
 */
export function jsonTextMayHoldUnstorable(text: string | Buffer): boolean {
  return text.indexOf('\\u') !== -1;
}
