// Compiles apps/ and libs/ (and any other roots asked for, such as bench/) to dist/ with swc
// (decorator metadata on, path aliases rewritten to relative requires), the dashboard with Vite,
// and the documentation site with VitePress (scripts/docs.mjs). Type checking is separate:
// `npm run typecheck`.
import { transformFile } from '@swc/core';
import { copyFile, mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { existsSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { buildDocs } from './docs.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outDir = join(root, 'dist');
const { compilerOptions } = JSON.parse(readFileSync(join(root, 'tsconfig.base.json'), 'utf8'));
const dashboardRoot = join(root, 'apps', 'dashboard');
/** The most JavaScript (gzip) the dashboard's first load may fetch; the build fails above it. */
export const DASHBOARD_JS_BUDGET_BYTES = 300 * 1024;

/**
 * The JavaScript a first visit loads: the scripts and module preloads index.html names, with
 * their gzip sizes (what a browser downloads from a compressing proxy).
 */
export function firstLoadJs(dir) {
  const html = readFileSync(join(dir, 'index.html'), 'utf8');
  const files = [...html.matchAll(/(?:src|href)="\/dashboard\/([^"]+\.js)"/g)].map((m) => m[1]);
  const sizes = files.map((file) => {
    const bytes = readFileSync(join(dir, file));
    return { file, bytes: bytes.length, gzipBytes: gzipSync(bytes, { level: 9 }).length };
  });
  return { files: sizes, gzipBytes: sizes.reduce((sum, f) => sum + f.gzipBytes, 0) };
}

/** Builds the dashboard SPA (Vite) into `<outDir>/dashboard`, and measures its first load. */
export async function buildDashboard(out) {
  const { build: viteBuild } = await import('vite');
  const target = join(out, 'dashboard');
  await viteBuild({
    configFile: join(dashboardRoot, 'vite.config.mjs'),
    build: { outDir: target },
  });
  const report = firstLoadJs(target);
  await writeFile(join(target, 'build-report.json'), `${JSON.stringify(report, null, 2)}\n`);
  const kb = (report.gzipBytes / 1024).toFixed(1);
  if (report.gzipBytes > DASHBOARD_JS_BUDGET_BYTES) {
    throw new Error(`dashboard: first-load JavaScript is ${kb} KB gzip, over the 300 KB budget`);
  }
  console.log(`dashboard: first-load JavaScript ${kb} KB gzip (budget 300 KB)`);
  return report;
}

async function* sources(dir) {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    // The dashboard is a browser app with its own build (Vite): see buildDashboard. A package's
    // own build output (libs/sdk/dist) is not a source.
    if (entry.isDirectory()) {
      if (path !== dashboardRoot && entry.name !== 'dist' && entry.name !== 'node_modules') {
        yield* sources(path);
      }
    } else if (entry.name.endsWith('.ts') && !/\.(spec|test)\.ts$/.test(entry.name)) yield path;
    else if (entry.name.endsWith('.json') && dir.includes('/src')) yield path;
  }
}

// Builds into a fresh folder and swaps it in, so processes starting from dist/ while another
// build runs (a bench beside a test run) never see it half-written.
// `docs: false` leaves the documentation site out (`npm run docs:generate` writes its pages).
export async function build({ roots = ['apps', 'libs'], docs = true } = {}) {
  const staging = `${outDir}.building-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  const files = [];
  for (const top of roots) {
    for await (const file of sources(join(root, top))) files.push(file);
  }
  await Promise.all(
    files.map(async (file) => {
      if (file.endsWith('.json')) {
        const target = join(staging, relative(root, file));
        await mkdir(dirname(target), { recursive: true });
        await copyFile(file, target);
        return;
      }
      const out = join(staging, relative(root, file)).replace(/\.ts$/, '.js');
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
  if (roots.includes('apps') && existsSync(dashboardRoot)) await buildDashboard(staging);
  // The documentation site, served by the api service at /docs/ (dead links fail the build).
  if (roots.includes('apps') && docs) await buildDocs(join(staging, 'docs'));
  const retired = `${outDir}.old-${process.pid}`;
  await rename(outDir, retired).catch(() => undefined);
  await rename(staging, outDir);
  await rm(retired, { recursive: true, force: true });
  return files.length;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = Date.now();
  const count = await build();
  console.log(`built ${count} files into dist/ in ${Date.now() - started} ms`);
}
