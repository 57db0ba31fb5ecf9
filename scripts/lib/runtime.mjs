// The Node.js runtime the project pins: the `node` devDependency ships the official binary, and npm
// scripts put node_modules/.bin first on PATH, so `npm start`, `npm test`, `npm run bench` and
// everything they spawn (through `process.execPath`) run on it, whatever Node the machine has.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The major version pinned by package.json's `node` devDependency (`24.21.0` → 24), else undefined. */
export function pinnedMajor(packageJson) {
  const spec = packageJson?.devDependencies?.node ?? packageJson?.dependencies?.node;
  const match = typeof spec === 'string' ? /(\d+)/.exec(spec) : null;
  return match ? Number(match[1]) : undefined;
}

/**
 * Why this process may not run the project (a sentence), or undefined when it may: the running
 * major version must be the pinned one. `version` is `process.version` (`v24.21.0`).
 */
export function runtimeProblem({ pinned, version, execPath }) {
  if (pinned === undefined) return undefined;
  const running = Number(/^v?(\d+)/.exec(version)?.[1]);
  if (running === pinned) return undefined;
  return (
    `Hookbase runs on Node.js ${pinned} (pinned by the "node" devDependency in package.json), ` +
    `but this is Node.js ${version} (${execPath}). Run \`npm install\` first, then start it through ` +
    `npm (\`npm start\`, \`npm test\`, \`npm run …\`), which puts node_modules/.bin/node first on PATH; ` +
    `or call node_modules/.bin/node directly.`
  );
}

/**
 * Prints the Node.js version this script runs on and throws (code RUNTIME_MISMATCH) when it is not
 * the pinned major version.
 */
export function checkRuntime({ log = (line) => console.log(line) } = {}) {
  const packageJson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const pinned = pinnedMajor(packageJson);
  log(
    `Node.js ${process.version} (${process.execPath})` +
      (pinned === undefined ? '' : `, pinned major ${pinned}`),
  );
  const problem = runtimeProblem({
    pinned,
    version: process.version,
    execPath: process.execPath,
  });
  if (problem) {
    const error = new Error(problem);
    error.code = 'RUNTIME_MISMATCH';
    throw error;
  }
}
