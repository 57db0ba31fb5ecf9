import { isStorableText, toStorableText, unstorableTextAt } from './storable-text';

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
