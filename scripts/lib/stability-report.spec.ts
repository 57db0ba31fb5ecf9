import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

// Plain ESM run by node (scripts/stability.mjs), so it is exercised in a node process of its own.
const moduleUrl = pathToFileURL(join(__dirname, 'stability-report.mjs')).href;

function call(fn: string, ...args: unknown[]): unknown {
  const program =
    `import * as report from ${JSON.stringify(moduleUrl)};\n` +
    `try { process.stdout.write(JSON.stringify({ value: report.${fn}(...${JSON.stringify(args)}) })); }` +
    ` catch (error) { process.stdout.write(JSON.stringify({ error: error.message })); }`;
  return JSON.parse(
    execFileSync(process.execPath, ['--input-type=module', '-e', program]).toString(),
  );
}

const jestResults = {
  numPassedTests: 3,
  numFailedTests: 2,
  numPendingTests: 1,
  testResults: [
    {
      name: '/repo/test/a.test.ts',
      status: 'failed',
      message: '',
      assertionResults: [
        { fullName: 'a delivers', status: 'passed', failureMessages: [] },
        { fullName: 'a retries', status: 'failed', failureMessages: ['Timed out waiting', 'at x'] },
      ],
    },
    {
      name: '/repo/test/b.test.ts',
      status: 'failed',
      message: 'Cannot find module x',
      assertionResults: [],
    },
    {
      name: '/repo/test/c.test.ts',
      status: 'passed',
      message: '',
      assertionResults: [{ fullName: 'c works', status: 'passed', failureMessages: [] }],
    },
  ],
};

describe('parseStabilityArgs', () => {
  it('takes the number of runs first, and passes what follows to Jest', () => {
    expect(call('parseStabilityArgs', ['7', 'test/chaos'])).toEqual({
      value: { runs: 7, jestArgs: ['test/chaos'] },
    });
  });

  it('runs five times when no number is given', () => {
    expect(call('parseStabilityArgs', [])).toEqual({ value: { runs: 5, jestArgs: [] } });
    expect(call('parseStabilityArgs', ['--bail'])).toEqual({
      value: { runs: 5, jestArgs: ['--bail'] },
    });
  });

  it.each(['0', '51', '2.5', 'five'])('refuses %s runs, saying what it takes', (runs) => {
    expect(call('parseStabilityArgs', [runs])).toEqual({
      error: `the number of runs must be a whole number from 1 to 50, got "${runs}"`,
    });
  });
});

describe('failuresOf', () => {
  it('names each failed test with its output, and each file that failed without one', () => {
    expect(call('failuresOf', jestResults)).toEqual({
      value: [
        { file: '/repo/test/a.test.ts', test: 'a retries', output: 'Timed out waiting\nat x' },
        { file: '/repo/test/b.test.ts', test: null, output: 'Cannot find module x' },
      ],
    });
  });

  it('counts a run that wrote no results as a failure', () => {
    expect(call('failuresOf', null)).toEqual({
      value: [{ file: null, test: null, output: 'Jest wrote no results' }],
    });
  });
});

describe('stabilityReport', () => {
  const run = (label: string, exitCode: number, failures: unknown[]) => ({
    label,
    durationMs: 61_000,
    exitCode,
    counts: { passed: 3, failed: failures.length, skipped: 0 },
    failures,
  });

  it('says so when no run failed', () => {
    const text = call('stabilityReport', [run('run 1', 0, []), run('run 2', 0, [])]) as {
      value: string;
    };
    expect(text.value).toContain('run 1: ok     3 passed, 0 failed, 0 skipped, exit 0, 61 s');
    expect(text.value).toContain('No failure in 2 runs.');
    expect(text.value).toContain('2 runs in 122 s.');
  });

  it('lists each failed test once, with the runs it failed in and every output', () => {
    const failure = (output: string) => ({
      file: '/repo/test/a.test.ts',
      test: 'a retries',
      output,
    });
    const { value } = call('stabilityReport', [
      run('run 1', 1, [failure('first time')]),
      run('run 2', 0, []),
      run('run 3', 1, [failure('second time')]),
    ]) as { value: string };
    expect(value).toContain('1 test failed in some run:');
    expect(value).toContain('✘ /repo/test/a.test.ts › a retries  (failed in run 1, run 3)');
    expect(value.indexOf('first time')).toBeLessThan(value.indexOf('second time'));
    expect(value).not.toContain('No failure');
  });

  it('reports a run that exited non-zero with nothing Jest could name', () => {
    const { value } = call('stabilityReport', [run('run 1', 1, [])]) as { value: string };
    expect(value).toContain('✘ (outside Jest) › the run exited non-zero  (failed in run 1)');
  });
});
