import { textArrayLiteral, textListsAsLiterals } from './named-statement';

// node-postgres's own conversion of a parameter (it ships no types for this module).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { prepareValue } = require('pg/lib/utils') as { prepareValue: (value: unknown) => unknown };

describe('textArrayLiteral', () => {
  const lists: (string | null | undefined)[][] = [
    [],
    ['msg_01m8xd0a85sqk6yseqxgtknrh3', 'msg_01m8xd0a85sqk6yseqxgtknrh4'],
    [''],
    [null, 'a', undefined, 'b'],
    ['say "hi"', 'back\\slash', 'both \\" at once', '\\\\', '""'],
    ['a,b', '{braces}', 'NULL', 'null', ' spaced ', 'tab\there', 'line\nbreak'],
    ['héllo', '日本語', 'emoji 🚀'],
  ];

  it.each(lists)('writes what node-postgres writes for %j', (...list) => {
    expect(textArrayLiteral(list)).toBe(prepareValue(list));
  });

  it('writes what node-postgres writes for random strings of the characters that need care', () => {
    const alphabet = ['a', 'Z', '0', '"', '\\', ',', '{', '}', ' ', 'é', '\n'];
    let seed = 7;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648);
    for (let round = 0; round < 200; round++) {
      const list = Array.from({ length: next() % 6 }, () =>
        Array.from({ length: next() % 8 }, () => alphabet[next() % alphabet.length]).join(''),
      );
      expect(textArrayLiteral(list)).toBe(prepareValue(list));
    }
  });
});

describe('textListsAsLiterals', () => {
  it('turns lists of strings (and nulls) into literals, and leaves every other value alone', () => {
    expect(textListsAsLiterals(['a', null])).toBe('{"a",NULL}');
    expect(textListsAsLiterals([])).toBe('{}');
    const numbers = [1, 2];
    const dates = [new Date(0)];
    const mixed = ['a', 1];
    expect(textListsAsLiterals(numbers)).toBe(numbers);
    expect(textListsAsLiterals(dates)).toBe(dates);
    expect(textListsAsLiterals(mixed)).toBe(mixed);
    expect(textListsAsLiterals('text')).toBe('text');
    expect(textListsAsLiterals(null)).toBe(null);
    expect(textListsAsLiterals(42)).toBe(42);
  });
});
