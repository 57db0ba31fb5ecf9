// `npm test`: the whole suite on a fresh machine. Starts (or reuses) Kafka and PostgreSQL, builds
// (the documentation site too: a dead link fails it), runs the type check, ESLint and Prettier,
// then Jest's unit, bench and integration projects, then the API fuzz (scripts/fuzz.mjs). Extra arguments go to Jest alone and skip the static
// checks and the fuzz (e.g. `npm test -- test/e2e/delivery.test.ts`). On a fresh machine the
// whole suite first starts the tools its test files build on first use (helm, moto, the Pub/Sub
// fake: minutes of Go and pip) in the background at the lowest CPU priority (`prebuild`).
import { spawn } from 'node:child_process';
import { mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from './build.mjs';
import { fuzz } from './fuzz.mjs';
import { ensureInfra, stopStartedInfra } from './infra.mjs';
import { ensureChromium } from './lib/chromium.mjs';
import { dataDir } from './lib/paths.mjs';
import { checkRuntime } from './lib/runtime.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);
const jestArgs = process.argv.slice(2);
const results = join(dataDir(), 'jest-results.json');
// No Nx daemon or cloud: one-shot commands on a machine that may be brand new.
process.env.NX_DAEMON = 'false';
process.env.NX_NO_CLOUD = 'true';

function run(command, args, env = process.env) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, stdio: 'inherit', env });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

async function step(name, command, args, env) {
  const started = Date.now();
  console.log(`\n▶ ${name}`);
  const code = await run(command, args, env);
  console.log(
    `${code === 0 ? '✔' : '✘'} ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)`,
  );
  return code;
}

/**
 * What the test files install or build on first use, slowest first (see `prebuild`).
 * Each command takes the same lock its test files take, so a file that needs the tool meanwhile
 * waits for this build instead of starting another.
 */
const PREBUILT = [
  ['helm and deploy-check', ['scripts/lib/deploy-tools.mjs', 'paths']],
  ['moto', ['scripts/lib/moto.mjs', 'prepare']],
  ['the Pub/Sub fake', ['scripts/lib/pubsub.mjs', 'prepare']],
];

/**
 * A detached child starts a session of its own, and Linux (with autogroup scheduling, the
 * default) shares the CPU between sessions before `nice` counts: `nice` alone would leave the
 * builds an equal share beside the suite. The session's own priority is lowered too, where the
 * kernel has it.
 */
function lowerSessionPriority(pid) {
  try {
    writeFileSync(`/proc/${pid}/autogroup`, '19');
  } catch {
    // No autogroup scheduling here: `nice` is enough.
  }
}

/**
 * On a fresh machine the tools above take minutes of Go and pip. The whole suite starts them in
 * the background, one after the other, under `nice` (so the suite's own processes come first),
 * with their output in a log file, while the infrastructure starts and the static checks run.
 * One that fails is tried again by the test file that needs it, which then reports why. Quick
 * when all are built; never outlives this run.
 */
function prebuild(log) {
  mkdirSync(dataDir(), { recursive: true });
  const file = join(dataDir(), 'prebuild.log');
  const out = openSync(file, 'w');
  let child;
  // However this run ends (a failed step, an error before the suite), no build outlives it.
  process.on('exit', () => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    try {
      // Its own process group (detached): the Go compilers and pip it started stop with it.
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      // Already gone.
    }
  });
  const next = (index) => {
    if (index >= PREBUILT.length) return;
    const [name, args] = PREBUILT[index];
    const started = Date.now();
    child = spawn('nice', ['-n', '19', process.execPath, ...args], {
      cwd: root,
      stdio: ['ignore', out, out],
      detached: true,
    });
    child.on('error', () => {});
    lowerSessionPriority(child.pid);
    child.on('exit', (code) => {
      const took = `${((Date.now() - started) / 1000).toFixed(0)} s`;
      log(code === 0 ? `prebuilt ${name} (${took})` : `${name} not prebuilt (see ${file})`);
      next(index + 1);
    });
  };
  next(0);
}

/** One plain closing line (`tests: N passed, N failed, N skipped`) that any reader of the log can count. */
function summarize(file) {
  try {
    const { numPassedTests, numFailedTests, numPendingTests } = JSON.parse(
      readFileSync(file, 'utf8'),
    );
    console.log(
      `\ntests: ${numPassedTests} passed, ${numFailedTests} failed, ${numPendingTests} skipped`,
    );
  } catch {
    console.log('\ntests: no results (Jest did not finish)');
  }
}

async function main() {
  const log = (line) => console.log(`  ${line}`);
  console.log('▶ runtime');
  checkRuntime({ log });
  // A stale result file must never be counted as this run's.
  rmSync(results, { force: true });
  if (jestArgs.length === 0) prebuild(log);
  console.log('▶ infrastructure');
  const infra = await ensureInfra({ log });
  let code = 1;
  try {
    // After the infrastructure, never beside it: two apt-get runs at once would contend for its lock.
    const chromium = await ensureChromium({ log: (line) => log(`[chromium] ${line}`) });
    const started = Date.now();
    const files = await build();
    console.log(`✔ build: ${files} files (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    if (jestArgs.length === 0) {
      for (const [name, command, args] of [
        ['type check', bin('tsc'), ['-p', 'tsconfig.json', '--noEmit']],
        ['type check (dashboard)', bin('tsc'), ['-p', 'apps/dashboard/tsconfig.json', '--noEmit']],
        // The module-boundary rule reads Nx's project graph, which `nx show projects` computes.
        ['Nx project graph', bin('nx'), ['show', 'projects']],
        ['ESLint', bin('eslint'), ['.']],
        ['Prettier', bin('prettier'), ['--check', '.', '--log-level', 'warn']],
      ]) {
        if ((await step(name, command, args)) !== 0) return 1;
      }
    }
    code = await step(
      'Jest (unit, bench, integration)',
      bin('jest'),
      // --forceExit: on 2 cores Jest runs the files in its own process, and a file whose cleanup
      // failed (a server left listening) would keep it alive after the last result: the run must
      // end with its results, and the failed cleanup is reported as the file's failure anyway.
      ['--ci', '--forceExit', '--json', `--outputFile=${results}`, ...jestArgs],
      {
        ...process.env,
        HOOKBASE_TEST_DATABASE_URL: infra.databaseUrl,
        HOOKBASE_TEST_KAFKA_BROKERS: infra.kafkaBrokers,
        HOOKBASE_TEST_CHROMIUM: chromium,
      },
    );
    if (jestArgs.length === 0) {
      const started = Date.now();
      console.log('\n▶ API fuzz (schemathesis, from the OpenAPI document)');
      const fuzzed = await fuzz({ ...infra, log: (line) => console.log(`  ${line}`) });
      console.log(
        `${fuzzed === 0 ? '✔' : '✘'} API fuzz (${((Date.now() - started) / 1000).toFixed(1)} s)`,
      );
      if (fuzzed !== 0) code = code || fuzzed;
    }
    return code;
  } finally {
    await stopStartedInfra(infra, { log });
    // CI reads the run's closing line: the count must be the very last thing printed.
    summarize(results);
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(`\n✘ ${error.message}`);
    process.exit(1);
  },
);
