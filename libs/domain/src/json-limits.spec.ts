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
});
