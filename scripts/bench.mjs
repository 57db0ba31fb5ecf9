// `npm run bench -- <scenario|all> [options]`: Hookbase's load benchmarks (bench/README.md).
// Ensures Kafka and PostgreSQL (as `npm test` does), builds the services into dist/ with
// scripts/build.mjs, the harness (bench/src) with them into dist/bench, then runs it. Stops the infrastructure afterwards only if this run started it.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from './build.mjs';
import { ensureInfra, stopStartedInfra } from './infra.mjs';
import { checkRuntime } from './lib/runtime.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

function runCli(args, env) {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['--enable-source-maps', join(root, 'dist', 'bench', 'src', 'cli.js'), ...args],
      { cwd: root, stdio: 'inherit', env },
    );
    // Ctrl-C reaches the CLI too (same process group); it stops its services itself, and this
    // script waits for it before stopping the infrastructure.
    const ignore = () => {};
    process.on('SIGINT', ignore);
    process.on('SIGTERM', ignore);
    child.on('exit', (code, signal) => {
      process.off('SIGINT', ignore);
      process.off('SIGTERM', ignore);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

async function main() {
  const args = process.argv.slice(2);
  const wantsHelp = args.length === 0 || args.includes('--help') || args.includes('-h');
  const log = (line) => console.error(`  ${line}`);
  checkRuntime({ log: (line) => console.error(line) });
  const infra = wantsHelp ? undefined : await ensureInfra({ log });
  try {
    const started = Date.now();
    const files = await build({ roots: ['apps', 'libs', 'bench'] });
    console.error(`built ${files} service and bench files (${Date.now() - started} ms)`);
    return await runCli(args, {
      ...process.env,
      ...(infra
        ? {
            HOOKBASE_BENCH_KAFKA_BROKERS: infra.kafkaBrokers,
            HOOKBASE_BENCH_DATABASE_URL: infra.databaseUrl,
          }
        : {}),
    });
  } finally {
    if (infra) await stopStartedInfra(infra, { log });
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(`✘ ${error.message}`);
    process.exit(1);
  },
);
