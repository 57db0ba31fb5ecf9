import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const RULES = join(ROOT, 'deploy', 'prometheus', 'hookbase-alerts.yaml');
const RULE_TESTS = join(ROOT, 'deploy', 'prometheus', 'hookbase-alerts.test.yaml');

/** Runs a command to its end: its exit code and what it printed. */
function runTool(command: string, args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd: ROOT, timeout: 120_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, output: `${stdout}${stderr}` });
    });
  });
}

/**
 * The alert rules through Prometheus's own checker: `promtool check rules` parses every rule and
 * its PromQL, `promtool test rules` runs deploy/prometheus/hookbase-alerts.test.yaml (series in,
 * alerts expected out). promtool comes from Debian's package, unpacked into .cache on first use.
 */
describe('deploy/prometheus alert rules, through promtool', () => {
  let promtool: string;

  beforeAll(async () => {
    const fetched = await runTool(process.execPath, [
      join(ROOT, 'scripts', 'lib', 'promtool.mjs'),
      'path',
    ]);
    if (fetched.code !== 0) throw new Error(`getting promtool failed:\n${fetched.output}`);
    promtool = (JSON.parse(fetched.output.trim().split('\n')[0]) as { path: string }).path;
  }, 180_000);

  it('parses every rule and expression', async () => {
    const checked = await runTool(promtool, ['check', 'rules', RULES]);
    expect(checked).toEqual({ code: 0, output: expect.stringMatching(/SUCCESS: \d+ rules found/) });
  });

  it('fires the alerts when the unit tests say, and a wrong expectation fails', async () => {
    const tested = await runTool(promtool, ['test', 'rules', RULE_TESTS]);
    expect(tested).toEqual({ code: 0, output: expect.stringContaining('SUCCESS') });

    // The same tests expecting one partition fewer without a consumer: promtool must refuse.
    const dir = mkdtempSync(join(tmpdir(), 'hookbase-alerts-'));
    try {
      writeFileSync(join(dir, 'hookbase-alerts.yaml'), readFileSync(RULES));
      const wrong = readFileSync(RULE_TESTS, 'utf8').replace(
        "'2 partition(s) of hb.deliveries have no consumer'",
        "'1 partition(s) of hb.deliveries have no consumer'",
      );
      expect(wrong).not.toBe(readFileSync(RULE_TESTS, 'utf8'));
      writeFileSync(join(dir, 'tests.yaml'), wrong);
      const refused = await runTool(promtool, ['test', 'rules', join(dir, 'tests.yaml')]);
      expect(refused.code).not.toBe(0);
      expect(refused.output).toContain('HookbasePartitionWithoutConsumer');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
