// Compiles apps/ and libs/ (and any other roots asked for, such as bench/) to dist/ with swc (decorator metadata on, path aliases rewritten to
// relative requires). Type checking is separate: `npm run typecheck`.
import { transformFile } from '@swc/core';
import { copyFile, mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outDir = join(root, 'dist');
const { compilerOptions } = JSON.parse(readFileSync(join(root, 'tsconfig.base.json'), 'utf8'));

async function* sources(dir) {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    // A package's own build output (libs/sdk/dist) is not a source.
    if (entry.isDirectory()) {
      if (entry.name !== 'dist' && entry.name !== 'node_modules') yield* sources(path);
    } else if (entry.name.endsWith('.ts') && !/\.(spec|test)\.ts$/.test(entry.name)) yield path;
    else if (entry.name.endsWith('.json') && dir.includes('/src')) yield path;
  }
}

// Builds into a fresh folder and swaps it in, so processes starting from dist/ while another
// build runs (a bench beside a test run) never see it half-written.
export async function build({ roots = ['apps', 'libs'] } = {}) {
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
