import { jsonShapeProblem, MAX_JSON_DEPTH } from './json-limits';

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const both = (text: string) => [jsonShapeProblem(text), jsonShapeProblem(Buffer.from(text))];

describe('jsonShapeProblem', () => {
  it(`takes ${MAX_JSON_DEPTH} levels of nesting and refuses one more`, () => {
    expect(both(nested(MAX_JSON_DEPTH))).toEqual([null, null]);
    for (const problem of both(nested(MAX_JSON_DEPTH + 1))) {
      expect(problem?.message).toBe(`JSON is nested deeper than ${MAX_JSON_DEPTH} levels`);
    }
    const objects = `${'{"a":'.repeat(MAX_JSON_DEPTH + 1)}1${'}'.repeat(MAX_JSON_DEPTH + 1)}`;
    expect(jsonShapeProblem(objects)?.message).toContain('nested deeper');
  });

  it('refuses nesting far beyond the limit quickly, without recursion', () => {
    expect(jsonShapeProblem(nested(1_000_000))?.message).toContain('nested deeper');
  });

  it('counts depth, not the number of siblings', () => {
    const wide = `[${Array.from({ length: 10_000 }, () => '[[1]]').join(',')}]`;
    expect(jsonShapeProblem(wide)).toBeNull();
  });

  it('ignores brackets, digits and escaped quotes inside strings', () => {
    const text = JSON.stringify({
      s: '['.repeat(500),
      t: 'a "quoted" [ 12345678901234567890',
      u: '\\',
    });
    expect(both(text)).toEqual([null, null]);
    expect(jsonShapeProblem(JSON.stringify({ '99999999999999999999': 1 }))).toBeNull();
  });

  it.each([
    ['9007199254740991', null],
    ['-9007199254740991', null],
    ['123456789012345', null],
    ['1.5', null],
    ['-0.000001', null],
    ['1e308', null],
    ['12345678901234567890.5', null],
    ['1.7976931348623157e308', null],
    [`${'9'.repeat(290)}.5`, null],
    ['-1234567890123.25', null],
  ])('takes the number %s', (number, expected) => {
    expect(both(`{"n":${number}}`)).toEqual([expected, expected]);
  });

  it.each([
    ['9007199254740992', 'would lose digits'],
    ['-9007199254740992', 'would lose digits'],
    ['12345678901234567891', 'would lose digits'],
    ['1e400', 'out of range'],
    ['-1e400', 'out of range'],
    ['2E+999', 'out of range'],
    [`${'9'.repeat(400)}.5`, 'out of range'],
  ])('refuses the number %s (%s)', (number, reason) => {
    for (const problem of both(`[1, ${number}]`)) {
      expect(problem?.message).toContain(reason);
      expect(problem?.message).toContain('send it as a string');
    }
  });

  it('shortens a huge number in its message', () => {
    const problem = jsonShapeProblem(`[${'9'.repeat(100_000)}]`);
    expect(problem?.message).toContain('would lose digits');
    expect(problem!.message.length).toBeLessThan(200);
  });

  it('leaves malformed text to the parser (no problem of shape to report)', () => {
    expect(jsonShapeProblem('{"a": tru')).toBeNull();
    expect(jsonShapeProblem('-')).toBeNull();
    expect(jsonShapeProblem(']]]')).toBeNull();
  });

  describe('reads text and bytes alike', () => {
    // A seeded mix of JSON documents: strings full of quotes, backslashes, brackets and digits,
    // nesting around the limit, and number tokens on both sides of the safe range.
    let seed = 17;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
    const pieces = ['"', '\\', '\\\\', '[', ']', '{', '}', '9', 'a', 'é', '😀', ' ', ','];
    const numbers: [string, boolean][] = [
      ['1', true],
      ['-12.5e3', true],
      ['9007199254740991', true],
      ['9007199254740992', false],
      ['-99999999999999999999', false],
      ['1e400', false],
      ['0.5', true],
    ];
    const text = () =>
      Array.from({ length: Math.floor(random() * 12) }, () => pick(pieces)).join('');
    /** A document, how deep it nests, and whether its numbers are all safe. */
    const document = (depth: number): [string, number, boolean] => {
      const roll = random();
      if (depth >= 4 || roll < 0.3) return [JSON.stringify(text()), depth, true];
      if (roll < 0.45) {
        const [token, ok] = pick(numbers);
        return [token, depth, ok];
      }
      const children = Array.from({ length: 1 + Math.floor(random() * 3) }, () =>
        document(depth + 1),
      );
      const reached = Math.max(...children.map(([, d]) => d));
      const safe = children.every(([, , ok]) => ok);
      if (random() < 0.5) return [`[${children.map(([child]) => child).join(',')}]`, reached, safe];
      const members = children.map(([child]) => `${JSON.stringify(text())}:${child}`);
      return [`{${members.join(',')}}`, reached, safe];
    };
    const deep = (levels: number, inner: string) =>
      `${'['.repeat(levels)}${inner}${']'.repeat(levels)}`;

    it('gives the same answer for 3,000 documents, and the right one', () => {
      for (let i = 0; i < 3_000; i++) {
        const [inner, depth, safe] = document(0);
        // Wrapped so that many land just below, at or just above the depth limit.
        const levels = MAX_JSON_DEPTH - 6 + Math.floor(random() * 8);
        const doc = deep(levels, inner);
        const [fromText, fromBytes] = both(doc);
        expect(fromBytes).toEqual(fromText);
        const tooDeep = levels + depth > MAX_JSON_DEPTH;
        // The first problem in the text is the one reported.
        if (tooDeep && !safe) expect(fromText?.message).toMatch(/nested deeper|as a string/);
        else if (tooDeep) expect(fromText?.message).toContain('nested deeper');
        else if (!safe) expect(fromText?.message).toContain('send it as a string');
        else expect(fromText).toBeNull();
      }
    });

    it('closes a string only at a quote after an even run of backslashes', () => {
      for (const run of [0, 1, 2, 3, 4, 7, 8]) {
        const value = `${'\\'.repeat(run)}"[[[`;
        const doc = JSON.stringify({ a: value, b: [[1]] });
        expect(both(doc)).toEqual([null, null]);
        expect(both(deep(MAX_JSON_DEPTH - 3, doc))).toEqual([null, null]);
        expect(jsonShapeProblem(deep(MAX_JSON_DEPTH - 2, doc))?.message).toContain('nested deeper');
      }
    });
  });
});
