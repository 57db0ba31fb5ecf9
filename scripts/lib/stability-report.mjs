// The pure half of `npm run test:stability`: reading its arguments, collecting what failed from
// Jest's JSON results, and writing the report. scripts/stability.mjs does the running.

/** `N` (how many runs, 1–50, default 5) and any further arguments, which go to Jest. */
export function parseStabilityArgs(argv) {
  const [first, ...rest] = argv;
  if (first === undefined || first.startsWith('-')) {
    return { runs: 5, jestArgs: first === undefined ? [] : argv };
  }
  const runs = Number(first);
  if (!Number.isInteger(runs) || runs < 1 || runs > 50) {
    throw new Error(`the number of runs must be a whole number from 1 to 50, got "${first}"`);
  }
  return { runs, jestArgs: rest };
}

/**
 * What failed in one Jest run, from its `--json` results (or null when Jest wrote none): every
 * failed test with its output, and every test file that failed without a failed test (it did not
 * load, or its hooks failed), with Jest's message.
 */
export function failuresOf(results) {
  if (!results) return [{ file: null, test: null, output: 'Jest wrote no results' }];
  const failures = [];
  for (const file of results.testResults ?? []) {
    const failedTests = (file.assertionResults ?? []).filter((test) => test.status === 'failed');
    for (const test of failedTests) {
      failures.push({
        file: file.name,
        test: test.fullName,
        output: (test.failureMessages ?? []).join('\n'),
      });
    }
    if (failedTests.length === 0 && file.status === 'failed') {
      failures.push({ file: file.name, test: null, output: file.message || 'the file failed' });
    }
  }
  return failures;
}

/** The counts of one run's results. */
export function countsOf(results) {
  return {
    passed: results?.numPassedTests ?? 0,
    failed: results?.numFailedTests ?? 0,
    skipped: results?.numPendingTests ?? 0,
  };
}

const seconds = (ms) => `${(ms / 1000).toFixed(0)} s`;

/**
 * The closing report: one line a run, then every test that failed in any run (grouped, with the
 * runs it failed in and the output of each failure), then the verdict.
 * @param {{ label: string, durationMs: number, exitCode: number, counts: object,
 *   failures: object[], log?: string }[]} runs
 * @param {(path: string) => string} relative how file paths are shown
 */
export function stabilityReport(runs, relative = (path) => path) {
  const lines = ['', 'Stability report', ''];
  for (const run of runs) {
    const { passed, failed, skipped } = run.counts;
    lines.push(
      `  ${run.label}: ${run.exitCode === 0 ? 'ok    ' : 'FAILED'} ${passed} passed, ${failed} failed, ` +
        `${skipped} skipped, exit ${run.exitCode}, ${seconds(run.durationMs)}` +
        (run.log ? `  (log: ${relative(run.log)})` : ''),
    );
  }
  const byTest = new Map();
  for (const run of runs) {
    for (const failure of run.failures) {
      const where = failure.file ? relative(failure.file) : '(no file)';
      const key = `${where} › ${failure.test ?? '(the file itself)'}`;
      if (!byTest.has(key)) byTest.set(key, []);
      byTest.get(key).push({ run: run.label, output: failure.output });
    }
    // A run that failed with no failure Jest could name (infrastructure, build, a crash).
    if (run.exitCode !== 0 && run.failures.length === 0) {
      const key = '(outside Jest) › the run exited non-zero';
      if (!byTest.has(key)) byTest.set(key, []);
      byTest.get(key).push({ run: run.label, output: `exit ${run.exitCode}; see its log` });
    }
  }
  lines.push('');
  if (byTest.size === 0) {
    lines.push(`No failure in ${runs.length} run${runs.length === 1 ? '' : 's'}.`);
  } else {
    lines.push(`${byTest.size} test${byTest.size === 1 ? '' : 's'} failed in some run:`);
    for (const [key, seen] of byTest) {
      lines.push('', `✘ ${key}  (failed in ${seen.map((s) => s.run).join(', ')})`);
      for (const { run, output } of seen) {
        lines.push(`  ── ${run} ──`);
        lines.push(...output.split('\n').map((line) => `  ${line}`));
      }
    }
  }
  const total = runs.reduce((sum, run) => sum + run.durationMs, 0);
  lines.push('', `${runs.length} runs in ${seconds(total)}.`);
  return lines.join('\n');
}
