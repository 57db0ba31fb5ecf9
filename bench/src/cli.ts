// The harness's own kafkajs clients get the same idle-timer fix as the services (libs/kafka).
import '@hookbase/kafka';
import { Cleanup } from './core/cleanup';
import { EXIT, ScenarioUnavailable } from './core/util';
import { BenchOptions, parseCommandLine, usage, UsageError } from './core/options';
import { Progress } from './core/progress';
import { renderResult, renderTable, writeResultFiles } from './core/report';
import { ScenarioResult } from './core/result';
import { gitCommit, machine } from './core/session';
import { SCENARIO_LIST } from './scenarios';

/** Seconds kept after a scenario's deadline for stopping services and dropping their state. */
const TEARDOWN_RESERVE_SECONDS = 25;

function notRun(
  options: BenchOptions,
  status: 'not-run' | 'error',
  reason: string,
  startedMs: number,
): ScenarioResult {
  return {
    scenario: options.scenario,
    status,
    title: status === 'not-run' ? 'not run' : 'failed',
    startedAt: new Date(startedMs).toISOString(),
    durationSeconds: (Date.now() - startedMs) / 1000,
    commit: gitCommit(),
    machine: machine(),
    topology: options.topology,
    options: {},
    summary: reason.split('\n')[0],
    headline: [[status === 'not-run' ? 'not run' : 'error', reason]],
    tables: [],
    runs: [],
    services: [],
    serviceLogs: null,
    harness: null,
    problems: status === 'error' ? [reason] : [],
    notes: [],
    extra: {},
    files: null,
  };
}

async function runScenario(options: BenchOptions, cleanup: Cleanup): Promise<ScenarioResult> {
  const startedMs = Date.now();
  const scenario = SCENARIO_LIST.find((s) => s.name === options.scenario)!;
  const progress = new Progress();
  const deadlineMs = startedMs + (options.maxSeconds - TEARDOWN_RESERVE_SECONDS) * 1000;
  // The last resort if something inside ignores its deadline: stop what was started, and exit.
  const watchdog = setTimeout(() => {
    progress.stop();
    console.error(
      `\n✘ ${options.scenario} still running after ${options.maxSeconds} s: stopping it (void run)`,
    );
    void cleanup
      .runAll(15_000, (line) => console.error(line))
      .finally(() => process.exit(EXIT.void));
  }, options.maxSeconds * 1000);
  watchdog.unref();
  try {
    const result = await scenario.run({ options, progress, cleanup, deadlineMs });
    return await writeResultFiles(options.resultsDir, result);
  } catch (error) {
    progress.stop();
    if (error instanceof ScenarioUnavailable)
      return notRun(options, 'not-run', error.message, startedMs);
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
    return notRun(options, 'error', message, startedMs);
  } finally {
    clearTimeout(watchdog);
    await cleanup.runAll(30_000, (line) => console.error(line));
  }
}

function exitCodeFor(result: ScenarioResult): number {
  if (result.status === 'ok') return EXIT.ok;
  if (result.status === 'not-run') return EXIT.unavailable;
  return EXIT.void;
}

export async function main(argv: readonly string[]): Promise<number> {
  let line;
  try {
    line = parseCommandLine(argv, process.env, SCENARIO_LIST);
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`${error.message}\n\n${usage(SCENARIO_LIST)}`);
      return EXIT.usage;
    }
    throw error;
  }
  if (line.help) {
    console.log(line.usage);
    return EXIT.ok;
  }
  gitCommit(); // read now: the build this run measures is the one made from it
  const cleanup = new Cleanup();
  let interrupted = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      interrupted = true;
      console.error(`\n${signal}: stopping the services this bench started…`);
      void cleanup.runAll(15_000, (text) => console.error(text)).finally(() => process.exit(130));
    });
  }

  const results: ScenarioResult[] = [];
  for (const scenario of line.scenarios) {
    let options: BenchOptions;
    try {
      options = line.optionsFor(scenario);
    } catch (error) {
      console.error((error as Error).message);
      return EXIT.usage;
    }
    const result = await runScenario(options, cleanup);
    results.push(result);
    console.log(renderResult(result));
    if (interrupted) break;
  }

  if (line.target !== 'all') return exitCodeFor(results[0]);
  console.log('\n══ all scenarios');
  console.log(
    renderTable(
      ['scenario', 'status', 'time', 'result'],
      results.map((r) => [
        r.scenario,
        r.status === 'not-run' ? 'NOT RUN' : r.status.toUpperCase(),
        `${r.durationSeconds.toFixed(0)} s`,
        r.summary.length > 110 ? `${r.summary.slice(0, 109)}…` : r.summary,
      ]),
    ),
  );
  // `all` passes when everything that could run here ran clean; what could not is listed above.
  return results.some((r) => r.status === 'void' || r.status === 'error') ? EXIT.void : EXIT.ok;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: Error) => {
      console.error(`✘ ${error.stack ?? error.message}`);
      process.exit(EXIT.void);
    },
  );
}
