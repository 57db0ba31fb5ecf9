// `npm run sdk:build`: builds @hookbase/sdk (libs/sdk) into libs/sdk/dist as a package that works
// outside this repository. tsc compiles the SDK and the workspace libraries it imports (only
// @hookbase/domain: its rules, so the outbox validates as the API does) side by side under dist/,
// then each `@hookbase/…` import, in the JavaScript and in the type declarations, is rewritten to
// the relative path of the copy in dist. npm dependencies stay imports.
import { execFileSync } from 'node:child_process';
import { chmod, cp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const sdk = join(root, 'libs', 'sdk');
const dist = join(sdk, 'dist');
/** The workspace libraries the SDK may carry, and where each lands in dist (rootDir is libs/). */
const bundled = { '@hookbase/domain': join(dist, 'domain', 'src', 'index') };

await rm(dist, { recursive: true, force: true });
execFileSync(
  process.execPath,
  [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
  { cwd: sdk, stdio: 'inherit' },
);

async function* files(dir) {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* files(path);
    else if (/\.(js|d\.ts)$/.test(entry.name)) yield path;
  }
}

const left = [];
for await (const file of files(dist)) {
  const text = await readFile(file, 'utf8');
  const rewritten = text.replace(/(["'])(@hookbase\/[a-z-]+)\1/g, (whole, quote, name) => {
    const target = bundled[name];
    if (!target) {
      left.push(`${relative(sdk, file)}: ${name}`);
      return whole;
    }
    let path = relative(dirname(file), target);
    if (!path.startsWith('.')) path = `./${path}`;
    return `${quote}${path}${quote}`;
  });
  if (rewritten !== text) await writeFile(file, rewritten);
}
if (left.length > 0) {
  console.error(`sdk:build: workspace imports the package cannot carry:\n  ${left.join('\n  ')}`);
  process.exit(1);
}
// The outbox tables as plain SQL, for pg users who run their migrations as SQL files.
await cp(join(sdk, 'src', 'outbox', 'migrations'), join(dist, 'migrations'), { recursive: true });
const bin = join(dist, 'sdk', 'src', 'outbox', 'relay-main.js');
await stat(bin);
await chmod(bin, 0o755); // the package's `hookbase-outbox-relay` command
console.log(`sdk:build: ${relative(root, dist)} written`);
