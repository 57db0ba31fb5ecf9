// The harness's own kafkajs clients get the same idle-timer fix as the services (libs/kafka).
import '@hookbase/kafka';
import { Cleanup } from './core/cleanup';
import { BenchOptions, parseCommandLine, usage, UsageError } from './core/options';
import { Progress } from './core/progress';
import { renderResult, renderTable, writeResultFiles } from './core/report';
import { ScenarioResult } from './core/result';
import { gitCommit, machine } from './core/session';
import { EXIT } from './core/util';
import { SCENARIO_LIST } from './scenarios';

/** Seconds kept after a scenario's deadline for stopping services and dropping their state. */
const TEARDOWN_RESERVE_SECONDS = 25;

/** A scenario, bounded by --max-seconds: a watchdog stops what it started if it overruns. */
async function runScenario(options: BenchOptions, cleanup: Cleanup): Promise<ScenarioResult> {
  const startedMs = Date.now();
  const scenario = SCENARIO_LIST.find((s) => s.name === options.scenario)!;
  const progress = new Progress();
  const deadlineMs = startedMs + (options.maxSeconds - TEARDOWN_RESERVE_SECONDS) * 1000;
  const log = (line: string) => console.error(line);
  const watchdog = setTimeout(() => {
    progress.stop();
    log(`\n✘ ${options.scenario} still running after ${options.maxSeconds} s: stopping it`);
    void cleanup.runAll(15_000, log).finally(() => process.exit(EXIT.void));
  }, options.maxSeconds * 1000);
  watchdog.unref();
  try {
    const result = await scenario.run({ options, progress, cleanup, deadlineMs });
    return await writeResultFiles(options.resultsDir, result);
  } catch (error) {
    progress.stop();
    const reason = error instanceof Error ? (error.stack ?? error.message) : String(error);
    return {
      scenario: options.scenario,
      status: 'error',
      title: 'failed',
      startedAt: new Date(startedMs).toISOString(),
      durationSeconds: (Date.now() - startedMs) / 1000,
      commit: gitCommit(),
      machine: machine(),
      topology: options.topology,
      options: {},
      summary: reason.split('\n')[0],
      headline: [['error', reason]],
      tables: [],
      runs: [],
      services: [],
      serviceLogs: null,
      harness: null,
      problems: [reason],
      notes: [],
      extra: {},
      files: null,
    };
  } finally {
    clearTimeout(watchdog);
    await cleanup.runAll(30_000, log);
  }
}

export async function main(argv: readonly string[]): Promise<number> {
  let line;
  try {
    line = parseCommandLine(argv, process.env, SCENARIO_LIST);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`${error.message}\n\n${usage(SCENARIO_LIST)}`);
    return EXIT.usage;
  }
  if (line.help) {
    console.log(line.usage);
    return EXIT.ok;
  }
  gitCommit(); // read now: the build this run measures is the one made from it
  const cleanup = new Cleanup();
  let interrupted = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      interrupted = true;
      console.error(`\n${signal}: stopping the services this bench started…`);
      void cleanup.runAll(15_000, (text) => console.error(text)).finally(() => process.exit(130));
    });
  const results: ScenarioResult[] = [];
  for (const scenario of line.scenarios) {
    let options: BenchOptions;
    try {
      options = line.optionsFor(scenario);
    } catch (error) {
      console.error((error as Error).message);
      return EXIT.usage;
    }
    results.push(await runScenario(options, cleanup));
    console.log(renderResult(results.at(-1)!));
    if (interrupted) break;
  }
  if (line.target === 'all') {
    const cut = (text: string) => (text.length > 110 ? `${text.slice(0, 109)}…` : text);
    const rows = results.map((r) => [
      r.scenario,
      r.status.toUpperCase(),
      `${r.durationSeconds.toFixed(0)} s`,
      cut(r.summary),
    ]);
    console.log(
      `\n══ all scenarios\n${renderTable(['scenario', 'status', 'time', 'result'], rows)}`,
    );
  }
  return results.every((r) => r.status === 'ok') ? EXIT.ok : EXIT.void;
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
