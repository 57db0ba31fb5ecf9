// The documentation site (VitePress, docs/): `npm run docs:dev` serves it with live reload,
// `npm run docs:build` builds it into dist/docs (VitePress fails the build on a dead link), and
// `npm run build` builds it with the rest for the api service to serve at /docs/. The API
// reference page renders GET /openapi.json with Redoc's standalone bundle, copied here from
// node_modules so the site loads nothing from another host.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const docsRoot = join(root, 'docs');
const require = createRequire(import.meta.url);

/** The one address on another host Redoc's bundle names: its badge's logo, made local here. */
const REDOC_BADGE = 'https://cdn.redoc.ly/redoc/logo-mini.svg';

/**
 * Puts the API reference's renderer beside its page (docs/public/reference, not committed), its
 * badge pointed at the site's own icon so the page asks no other host for anything.
 */
function placeRenderer() {
  const target = join(docsRoot, 'public', 'reference');
  mkdirSync(target, { recursive: true });
  const bundle = readFileSync(require.resolve('redoc/bundles/redoc.standalone.js'), 'utf8');
  if (!bundle.includes(REDOC_BADGE))
    throw new Error(`redoc: ${REDOC_BADGE} not found in the bundle`);
  writeFileSync(
    join(target, 'redoc.standalone.js'),
    bundle.replaceAll(REDOC_BADGE, '../favicon.svg'),
  );
}

/** Builds the site into `outDir` (default dist/docs); throws on a dead link. */
export async function buildDocs(outDir = join(root, 'dist', 'docs')) {
  placeRenderer();
  const { build } = await import('vitepress');
  await build(docsRoot, { outDir });
  return outDir;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const command = process.argv[2];
  if (command === 'build') {
    const started = Date.now();
    try {
      const out = await buildDocs();
      console.log(`docs: built into ${out} in ${Date.now() - started} ms`);
    } catch (error) {
      console.error(`docs: ${error.message}`);
      process.exit(1);
    }
  } else if (command === 'dev') {
    placeRenderer();
    const child = spawn(
      join(root, 'node_modules', '.bin', 'vitepress'),
      ['dev', docsRoot, ...process.argv.slice(3)],
      { stdio: 'inherit' },
    );
    child.on('exit', (code) => process.exit(code ?? 0));
  } else {
    console.error('usage: node scripts/docs.mjs build|dev');
    process.exit(2);
  }
}
