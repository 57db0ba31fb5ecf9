import {
  isStorableText,
  jsonTextMayHoldUnstorable,
  toStorableText,
  unstorableTextAt,
} from './storable-text';

describe('isStorableText', () => {
  it.each([
    '',
    'plain',
    'ünïcode ✓',
    '😀 paired surrogates',
    '\u0001 control characters',
    '\uFFFF',
  ])('accepts %j', (text) => expect(isStorableText(text)).toBe(true));

  it.each(['a\u0000b', '\uD83D alone', 'end \uD83D', '\uDE00 low alone', 'x\uDE00\uD83D'])(
    'refuses %j',
    (text) => expect(isStorableText(text)).toBe(false),
  );

  it('agrees with the pattern toStorableText replaces by, on 20,000 seeded mixes', () => {
    // Unpaired and paired surrogates at either end and side by side, U+0000, one- and two-byte text.
    const parts = ['a', 'é', '\u0000', '\uD83D', '\uDE00', '\uDBFF', '\uDC00', '😀', '\uFFFF', ' '];
    let seed = 5;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    let refused = 0;
    for (let i = 0; i < 20_000; i++) {
      const length = Math.floor(random() * 6);
      const text = Array.from({ length }, () => parts[Math.floor(random() * parts.length)]).join(
        '',
      );
      const byPattern = toStorableText(text) === text;
      expect(isStorableText(text)).toBe(byPattern);
      if (!byPattern) refused++;
    }
    // Both kinds of answer were checked many times.
    expect(refused).toBeGreaterThan(5_000);
    expect(refused).toBeLessThan(15_000);
  });
});

describe('unstorableTextAt', () => {
  it('finds nothing in ordinary JSON', () => {
    expect(unstorableTextAt({ a: [1, 'b', { c: null, d: true }], e: '😀' })).toBeNull();
  });

  it('names the path of a bad value, in arrays and objects', () => {
    expect(unstorableTextAt({ a: [1, { b: 'x\u0000' }] })).toBe('a[1].b');
    expect(unstorableTextAt('\uD800')).toBe('(value)');
  });

  it('checks keys too', () => {
    expect(unstorableTextAt({ ok: { 'bad\u0000key': 1 } })).toBe('ok (a key)');
    expect(unstorableTextAt({ 'bad\uD800': 1 })).toBe('(value) (a key)');
    expect(unstorableTextAt({ a: [{ b: [{ 'c\u0000': 1 }] }] })).toBe('a[0].b[0] (a key)');
  });

  it('spells paths through arrays at the top and nested keys', () => {
    expect(unstorableTextAt([['ok', 'x\uDC00']])).toBe('[0][1]');
    expect(unstorableTextAt({ a: { b: { c: ['ok', { d: '\u0000' }] } } })).toBe('a.b.c[1].d');
  });

  it('ignores inherited properties', () => {
    const proto = { inherited: '\u0000' };
    expect(unstorableTextAt(Object.create(proto) as object)).toBeNull();
  });

  it('walks deep nesting without recursion', () => {
    let deep: unknown = 'x\u0000';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(unstorableTextAt(deep)).toMatch(/^\[0\]/);
  });
});

describe('toStorableText', () => {
  it('replaces what cannot be stored and keeps the rest', () => {
    expect(toStorableText('a\u0000b\uD83Dc😀')).toBe('a\uFFFDb\uFFFDc😀');
    expect(isStorableText(toStorableText('\uDE00\u0000'))).toBe(true);
  });
});

describe('jsonTextMayHoldUnstorable', () => {
  it('is false for JSON text without a \\u escape, as string or buffer', () => {
    const text = JSON.stringify({ eventType: 'a.b', payload: { s: 'ünïcode ✓ 😀', n: [1, null] } });
    expect(jsonTextMayHoldUnstorable(text)).toBe(false);
    expect(jsonTextMayHoldUnstorable(Buffer.from(text))).toBe(false);
  });

  it('is true for text with an escape, even a harmless one', () => {
    expect(jsonTextMayHoldUnstorable('{"a":"\\u0000"}')).toBe(true);
    expect(jsonTextMayHoldUnstorable(Buffer.from('{"a":"\\ud800"}'))).toBe(true);
    expect(jsonTextMayHoldUnstorable('{"a":"\\u00e9"}')).toBe(true);
  });

  it('never says "nothing to check" of text whose parsed value cannot be stored', () => {
    // Strings with every kind of trouble in keys and values, as JSON.stringify writes them
    // (it escapes U+0000 and lone surrogates): the parsed value is unstorable only when the
    // text has an escape, so skipping the walk without one loses nothing.
    const pieces = ['a', 'é', '😀', '\u0000', '\uD800', '\uDC00', '\u0001', '"', '\\', '\n'];
    let seed = 7;
    const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    const pick = () =>
      Array.from(
        { length: 1 + Math.floor(random() * 4) },
        () => pieces[Math.floor(random() * pieces.length)],
      ).join('');
    let unstorable = 0;
    for (let i = 0; i < 2000; i++) {
      const text = JSON.stringify({ [pick()]: [pick(), { [pick()]: pick() }] });
      const bad = unstorableTextAt(JSON.parse(text)) !== null;
      if (bad) unstorable++;
      if (!jsonTextMayHoldUnstorable(text)) expect(bad).toBe(false);
      expect(jsonTextMayHoldUnstorable(Buffer.from(text, 'utf8'))).toBe(
        jsonTextMayHoldUnstorable(text),
      );
    }
    expect(unstorable).toBeGreaterThan(100);
  });
});
