// PostgreSQL text and jsonb cannot hold U+0000, and jsonb refuses unpaired UTF-16 surrogates.
// An event carrying either would be accepted onto Kafka and then fail at every attempt to record
// it, stalling its partition: such input is refused at the door instead.
// eslint-disable-next-line no-control-regex -- matching U+0000 is the point
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function isStorableText(text: string): boolean {
  return !UNSTORABLE.test(text);
}

/** The text with every unstorable character replaced by U+FFFD, for keeping excerpts of bad input. */
export function toStorableText(text: string): string {
  return text.replace(new RegExp(UNSTORABLE.source, 'g'), '\uFFFD');
}

/**
 * The path of the first string (object key or value) in a JSON value that PostgreSQL cannot
 * store, or null when every one can. Iterative, so deeply nested input cannot overflow the stack.
 */
export function unstorableTextAt(value: unknown): string | null {
  const pending: { value: unknown; path: string }[] = [{ value, path: '' }];
  while (pending.length > 0) {
    const { value: current, path } = pending.pop()!;
    if (typeof current === 'string') {
      if (!isStorableText(current)) return path || '(value)';
    } else if (Array.isArray(current)) {
      current.forEach((item, index) => pending.push({ value: item, path: `${path}[${index}]` }));
    } else if (current !== null && typeof current === 'object') {
      for (const [key, item] of Object.entries(current)) {
        const at = path ? `${path}.${key}` : key;
        if (!isStorableText(key)) return `${path || '(value)'} (a key)`;
        pending.push({ value: item, path: at });
      }
    }
  }
  return null;
}
