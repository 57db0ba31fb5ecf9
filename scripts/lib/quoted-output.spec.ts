import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

// The module is plain ESM run by node (scripts/*.mjs), so it is exercised in a node process of
// its own, as the scripts use it.
const moduleUrl = pathToFileURL(join(__dirname, 'quoted-output.mjs')).href;

function runInNode(body: string): unknown {
  const program = `import * as quoted from ${JSON.stringify(moduleUrl)};\n${body}`;
  return JSON.parse(
    execFileSync(process.execPath, ['--input-type=module', '-e', program]).toString(),
  );
}

// What CI takes for pytest's closing line (a banner that ends in a duration).
const pytestClosing = /^=+ .* in [\d.]+s =+$/;

describe('quoteToolLine', () => {
  it.each([
    [
      '============================= 2 warnings in 27.14s =============================',
      '── 2 warnings in 27.14s ──',
    ],
    [
      '=================================== SUMMARY ====================================',
      '── SUMMARY ──',
    ],
    ['  2500 generated, 2500 passed', '  2500 generated, 2500 passed'],
    ['     ✅ 25 passed', '     ✅ 25 passed'],
    ['a = b = c', 'a = b = c'],
    ['', ''],
  ])('%j → %j', (line, expected) => {
    expect(
      runInNode(`console.log(JSON.stringify(quoted.quoteToolLine(${JSON.stringify(line)})))`),
    ).toBe(expected);
  });
});

describe('runQuoted', () => {
  it("prints a child's stdout and stderr with banners relabelled and returns its exit code", () => {
    const child = [
      "console.log('Test cases:');",
      "console.log('  2500 generated, 2500 passed');",
      "console.error('warning on stderr');",
      "console.log('============================= 2 warnings in 27.14s =============================');",
      'process.exit(3);',
    ].join(' ');
    const result = runInNode(`
      const printed = [];
      const status = await quoted.runQuoted(process.execPath, ['-e', ${JSON.stringify(child)}], {
        timeoutMs: 30000,
        print: (line) => printed.push(line),
      });
      console.log(JSON.stringify({ status, printed }));
    `) as { status: number; printed: string[] };
    expect(result.status).toBe(3);
    expect([...result.printed].sort()).toEqual(
      [
        'Test cases:',
        '  2500 generated, 2500 passed',
        'warning on stderr',
        '── 2 warnings in 27.14s ──',
      ].sort(),
    );
    expect(result.printed.filter((line) => pytestClosing.test(line))).toEqual([]);
  });

  it('returns 1 when the command cannot be started', () => {
    const result = runInNode(`
      const printed = [];
      const status = await quoted.runQuoted('/nonexistent/tool', [], { timeoutMs: 5000, print: (l) => printed.push(l) });
      console.log(JSON.stringify({ status, printed }));
    `) as { status: number; printed: string[] };
    expect(result.status).toBe(1);
    expect(result.printed.join('\n')).toMatch(/could not run \/nonexistent\/tool/);
  });
});
