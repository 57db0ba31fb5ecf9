// `npm run test:stability -- N`: is the suite stable? Runs the unit and bench specs once, then the
// integration and end-to-end tests (Jest's `integration` project) N times (default 5), each on
// infrastructure of its own: a fresh data directory and fresh ports for Kafka, PostgreSQL, moto and
// the Pub/Sub fake, started and stopped by that run's `npm test`. Nothing is retried. Reports every
// test that failed in any run, with its output; exit 0 only when none did. Further arguments go to
// Jest (e.g. `npm run test:stability -- 3 test/chaos`). Runs' logs are kept under
// .data/stability/<time>/; a failed run's data directory (server logs) is kept beside its log.
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, relative } from 'node:path';
import { dataDir, root } from './lib/paths.mjs';
import { checkRuntime } from './lib/runtime.mjs';
import {
  countsOf,
  failuresOf,
  parseStabilityArgs,
  stabilityReport,
} from './lib/stability-report.mjs';

function canListen(port) {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** `count` consecutive free loopback ports, none of them in `taken`, from a random start. */
async function freePorts(count, taken) {
  for (let tries = 0; tries < 200; tries++) {
    const start = 20_000 + Math.floor(Math.random() * 20_000);
    const ports = Array.from({ length: count }, (_, i) => start + i);
    if (ports.some((port) => taken.has(port))) continue;
    if ((await Promise.all(ports.map(canListen))).every(Boolean)) {
      ports.forEach((port) => taken.add(port));
      return ports;
    }
  }
  throw new Error(`found no ${count} free consecutive loopback ports`);
}

/** The environment of one run: its data directory and ports, and nothing pointing elsewhere. */
async function runEnvironment(runDir) {
  const taken = new Set();
  const [kafka] = await freePorts(2, taken); // the broker and its controller (KAFKA_PORT + 1)
  const [postgres] = await freePorts(1, taken);
  const [moto] = await freePorts(1, taken);
  const [pubsub] = await freePorts(1, taken);
  const env = { ...process.env };
  for (const name of [
    'KAFKA_BROKERS',
    'DATABASE_URL',
    'HOOKBASE_TEST_DATABASE_URL',
    'HOOKBASE_TEST_KAFKA_BROKERS',
  ]) {
    delete env[name];
  }
  return {
    ...env,
    HOOKBASE_DATA_DIR: runDir,
    KAFKA_PORT: String(kafka),
    PGPORT_HOOKBASE: String(postgres),
    MOTO_PORT: String(moto),
    PUBSUB_PORT: String(pubsub),
  };
}

/** Runs a command with its output into `logFile`; resolves with its exit code. */
function runLogged(command, args, env, logFile) {
  return new Promise((resolve) => {
    const log = createWriteStream(logFile);
    const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.pipe(log, { end: false });
    child.stderr.pipe(log, { end: false });
    child.on('exit', (code, signal) => {
      log.end(() => resolve(code ?? (signal ? 1 : 0)));
    });
  });
}

const readResults = (file) => {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
};

async function main() {
  checkRuntime();
  const { runs, jestArgs } = parseStabilityArgs(process.argv.slice(2));
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const home = join(dataDir(), 'stability', stamp);
  mkdirSync(home, { recursive: true });
  const shown = (path) => relative(root, path) || '.';
  console.log(
    `Stability check: unit and bench specs once, integration tests ${runs} time${runs === 1 ? '' : 's'} (${shown(home)})`,
  );
  const outcomes = [];

  {
    const started = Date.now();
    const log = join(home, 'unit.log');
    const resultsFile = join(home, 'unit.json');
    const exitCode = await runLogged(
      join(root, 'node_modules', '.bin', 'jest'),
      ['--ci', '--selectProjects', 'unit', 'bench', '--json', `--outputFile=${resultsFile}`],
      process.env,
      log,
    );
    const results = readResults(resultsFile);
    outcomes.push({
      label: 'unit + bench',
      durationMs: Date.now() - started,
      exitCode,
      counts: countsOf(results),
      failures: exitCode === 0 ? [] : failuresOf(results),
      log,
    });
    console.log(
      `  unit + bench: exit ${exitCode} (${((Date.now() - started) / 1000).toFixed(0)} s)`,
    );
  }

  for (let run = 1; run <= runs; run++) {
    const started = Date.now();
    const runDir = join(home, `run-${run}`);
    const log = join(home, `run-${run}.log`);
    const env = await runEnvironment(runDir);
    console.log(
      `  run ${run}/${runs}: Kafka :${env.KAFKA_PORT}, PostgreSQL :${env.PGPORT_HOOKBASE}, ` +
        `moto :${env.MOTO_PORT}, Pub/Sub :${env.PUBSUB_PORT}`,
    );
    const exitCode = await runLogged(
      process.execPath,
      // Jest's --selectProjects takes every word after it: the paths go first.
      [join(root, 'scripts', 'test.mjs'), ...jestArgs, '--selectProjects', 'integration'],
      env,
      log,
    );
    const results = readResults(join(runDir, 'jest-results.json'));
    const failures = results ? failuresOf(results) : failuresOf(null);
    outcomes.push({
      label: `run ${run}`,
      durationMs: Date.now() - started,
      exitCode,
      counts: countsOf(results),
      failures,
      log,
    });
    const { passed, failed } = countsOf(results);
    console.log(
      `  run ${run}/${runs}: exit ${exitCode}, ${passed} passed, ${failed} failed ` +
        `(${((Date.now() - started) / 1000).toFixed(0)} s)`,
    );
    // A clean run's servers and data go; a failed one's stay for its server logs.
    if (exitCode === 0 && failures.length === 0 && existsSync(runDir)) {
      rmSync(runDir, { recursive: true, force: true });
    }
  }

  console.log(stabilityReport(outcomes, shown));
  return outcomes.every((run) => run.exitCode === 0 && run.failures.length === 0) ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(`\n✘ ${error.message}`);
    process.exit(1);
  },
);
