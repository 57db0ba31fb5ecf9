// The tools that check deploy/ offline: `helm` (helm.sh/helm/v4, the version deploy/deploy-check's
// go.mod requires as a tool) and `deploy-check` (deploy/deploy-check: rendered manifests decoded
// strictly with client-go's scheme, the Compose file against the Compose Specification's schema).
// Both are built once with `go build` (modules from the Go module proxy) into
// .cache/deploy-tools-<digest of the sources>/, under a lock, so runs at the same time build once.
// Go builds of helm take minutes on a loaded machine: the binaries are kept for the next run.
//
//   node scripts/lib/deploy-tools.mjs paths   (prints {"helm": "...", "deployCheck": "..."})
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { root } from './paths.mjs';
import { lastLines, run, withLock } from './wait.mjs';

const sourceDir = join(root, 'deploy', 'deploy-check');
const sources = ['go.mod', 'go.sum', 'main.go'];

/** Names the build by its sources: a new helm version or an edit of main.go builds anew. */
function sourceDigest() {
  const hash = createHash('sha256');
  for (const file of sources) hash.update(readFileSync(join(sourceDir, file)));
  return hash.digest('hex').slice(0, 16);
}

const buildDir = join(root, '.cache', `deploy-tools-${sourceDigest()}`);
const binaries = { helm: join(buildDir, 'helm'), deployCheck: join(buildDir, 'deploy-check') };
const packages = { helm: 'helm.sh/helm/v4/cmd/helm', deployCheck: '.' };

function requireGo() {
  const result = spawnSync('go', ['version'], { encoding: 'utf8' });
  if (result.error || result.status !== 0) {
    throw new Error('helm and deploy-check are built with Go (1.26 or newer): `go` is not on PATH');
  }
}

async function build(name, log) {
  if (existsSync(binaries[name])) return;
  log(`building ${name} (${packages[name]}) into ${buildDir} (once)`);
  // Built beside the target and renamed into place: an interrupted build leaves no half binary.
  const staging = `${binaries[name]}.tmp-${process.pid}`;
  const { code, output } = await run('go', ['build', '-trimpath', '-o', staging, packages[name]], {
    cwd: sourceDir,
    env: { ...process.env, CGO_ENABLED: '0' },
  });
  if (code !== 0) {
    rmSync(staging, { force: true });
    throw new Error(`go build of ${packages[name]} failed (exit ${code}):\n${lastLines(output)}`);
  }
  renameSync(staging, binaries[name]);
}

/** The paths of both tools, built on first use. */
export async function ensureDeployTools(log = (line) => console.error(line)) {
  if (Object.values(binaries).every((path) => existsSync(path))) return binaries;
  requireGo();
  mkdirSync(buildDir, { recursive: true });
  await withLock(
    join(buildDir, '.lock'),
    async () => {
      await build('deployCheck', log);
      await build('helm', log);
    },
    { timeoutMs: 1_200_000 },
  );
  return binaries;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv[2] !== 'paths') {
    console.error('usage: node scripts/lib/deploy-tools.mjs paths');
    process.exit(2);
  }
  try {
    console.log(JSON.stringify(await ensureDeployTools()));
  } catch (error) {
    console.error(error.message);
    process.exit(1);
  }
}
