// `npm run bench -- <scenario|all> [options]`: Hookbase's load benchmarks (bench/README.md).
// Ensures Kafka and PostgreSQL (as `npm test` does), builds the services into dist/ with
// scripts/build.mjs, compiles the harness (bench/src) into dist/bench with the same swc options,
// then runs it. Stops the infrastructure afterwards only if this run started it.
import { transformFile } from '@swc/core';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from './build.mjs';
import { ensureInfra, stopStartedInfra } from './infra.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { compilerOptions } = JSON.parse(readFileSync(join(root, 'tsconfig.base.json'), 'utf8'));

async function* sources(dir) {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(path);
    else if (entry.name.endsWith('.ts') && !/\.(spec|test)\.ts$/.test(entry.name)) yield path;
  }
}

/** bench/src → dist/bench/src, with build.mjs's transform (path aliases rewritten to relative). */
async function compileBench() {
  const files = [];
  for await (const file of sources(join(root, 'bench', 'src'))) files.push(file);
  await Promise.all(
    files.map(async (file) => {
      const out = join(root, 'dist', relative(root, file)).replace(/\.ts$/, '.js');
      const result = await transformFile(file, {
        sourceMaps: true,
        module: { type: 'commonjs' },
        jsc: {
          target: 'es2022',
          baseUrl: root,
          paths: compilerOptions.paths,
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true },
          keepClassNames: true,
        },
      });
      await mkdir(dirname(out), { recursive: true });
      await writeFile(out, result.code + `\n//# sourceMappingURL=${out.split('/').pop()}.map\n`);
      await writeFile(`${out}.map`, result.map ?? '{}');
    }),
  );
  return files.length;
}

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
  const infra = wantsHelp ? undefined : await ensureInfra({ log });
  try {
    const started = Date.now();
    const services = await build();
    const harness = await compileBench();
    console.error(
      `built ${services} service files and ${harness} bench files (${Date.now() - started} ms)`,
    );
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
