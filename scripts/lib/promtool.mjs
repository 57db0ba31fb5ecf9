// Prometheus's promtool, to check deploy/prometheus's alert rules and run their unit tests. Taken
// from Debian's `prometheus` package without installing it: `apt-get download` fetches the .deb,
// `dpkg-deb -x` unpacks it, and only the promtool binary is kept, in .cache/promtool/ (once; no
// daemon, nothing system-wide). Building it from the Go module proxy instead takes far too long.
//
//   node scripts/lib/promtool.mjs path    (prints {"path": "..."} once promtool is there)
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { root } from './paths.mjs';
import { lastLines, run, withLock } from './wait.mjs';

const cacheDir = join(root, '.cache', 'promtool');
const binary = join(cacheDir, 'promtool');

async function aptGet(args, cwd) {
  return run('apt-get', args, { cwd, env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
}

async function fetchPromtool(log) {
  const work = join(cacheDir, 'download');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  try {
    let download = await aptGet(['download', 'prometheus'], work);
    if (download.code !== 0) {
      // An empty or old package list: read it once, then try again.
      log('apt-get download prometheus failed: running apt-get update first');
      const update = await aptGet(['update'], work);
      if (update.code !== 0)
        throw new Error(
          `apt-get update failed (exit ${update.code}):\n${lastLines(update.output)}`,
        );
      download = await aptGet(['download', 'prometheus'], work);
    }
    if (download.code !== 0) {
      throw new Error(
        `apt-get download prometheus failed (exit ${download.code}):\n${lastLines(download.output)}`,
      );
    }
    const deb = readdirSync(work).find((name) => name.endsWith('.deb'));
    if (!deb) throw new Error('apt-get download prometheus left no .deb');
    const unpack = await run('dpkg-deb', ['-x', deb, 'x'], { cwd: work });
    if (unpack.code !== 0)
      throw new Error(
        `dpkg-deb -x ${deb} failed (exit ${unpack.code}):\n${lastLines(unpack.output)}`,
      );
    const unpacked = join(work, 'x', 'usr', 'bin', 'promtool');
    if (!existsSync(unpacked)) throw new Error(`${deb} holds no usr/bin/promtool`);
    renameSync(unpacked, binary);
    log(`promtool from ${deb} in ${binary}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The path of a working promtool, fetched into .cache on first use. */
export async function ensurePromtool(log = (line) => console.error(line)) {
  if (existsSync(binary)) return binary;
  mkdirSync(cacheDir, { recursive: true });
  await withLock(join(cacheDir, '.lock'), async () => {
    if (!existsSync(binary)) await fetchPromtool(log);
  });
  return binary;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const command = process.argv[2];
  if (command !== 'path') {
    console.error('usage: node scripts/lib/promtool.mjs path');
    process.exit(2);
  }
  try {
    console.log(JSON.stringify({ path: await ensurePromtool() }));
  } catch (error) {
    console.error(error.message);
    process.exit(1);
  }
}
