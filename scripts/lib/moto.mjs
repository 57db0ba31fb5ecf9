// moto's server (PyPI `moto[server]`, pinned) as the local AWS for SQS, SNS, EventBridge and S3:
// installed once into a virtual environment under .cache/moto-<version> (needs Python 3 with the
// venv module), started on 127.0.0.1:$MOTO_PORT (14566 by default), reused when the port already
// answers as moto. State is in memory: a restart starts empty.
//
//   node scripts/lib/moto.mjs up | down | status | prepare (install only)
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { localEmulator, root } from './emulator.mjs';
import { lastLines, run } from './wait.mjs';

export const MOTO_VERSION = '5.2.5';

const venv = join(root, '.cache', `moto-${MOTO_VERSION}`);
const serverBin = join(venv, 'bin', 'moto_server');
// Written after pip succeeded: a venv without it is a broken install and is made again.
const installedMarker = join(venv, '.hookbase-installed');

async function install(log) {
  if (existsSync(installedMarker) && existsSync(serverBin)) return;
  const python = process.env.PYTHON ?? 'python3';
  log(`installing moto[server]==${MOTO_VERSION} into ${venv} (once)`);
  rmSync(venv, { recursive: true, force: true });
  const created = await run(python, ['-m', 'venv', venv]).catch((error) => ({
    code: -1,
    output: error.message,
  }));
  if (created.code !== 0) {
    rmSync(venv, { recursive: true, force: true });
    // Debian's python3 ships without venv/ensurepip: `-m venv` then exits 1 saying "ensurepip is
    // not available" (and that the python3-venv package is needed).
    throw new Error(
      `\`${python} -m venv\` failed (exit ${created.code}), so moto cannot be installed. Install ` +
        'Python 3 with its venv module (Debian: `apt-get install python3 python3-venv`), or set ' +
        `PYTHON to one that has it.\n${lastLines(created.output, 10)}`,
    );
  }
  const pip = join(venv, 'bin', 'pip');
  const installed = await run(pip, [
    'install',
    '--quiet',
    '--disable-pip-version-check',
    `moto[server]==${MOTO_VERSION}`,
  ]);
  if (installed.code !== 0 || !existsSync(serverBin)) {
    rmSync(venv, { recursive: true, force: true });
    throw new Error(
      `pip could not install moto[server]==${MOTO_VERSION} (exit ${installed.code}):\n` +
        lastLines(installed.output, 20),
    );
  }
  writeFileSync(installedMarker, `${MOTO_VERSION}\n`);
}

/** True when moto's own API answers on the port (a plain open port could be anything). */
async function probe(port) {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/moto-api/config`, {
      signal: AbortSignal.timeout(1000),
    });
    if (!response.ok) return false;
    const body = await response.json();
    return typeof body === 'object' && body !== null;
  } catch {
    return false;
  }
}

const moto = localEmulator({
  name: 'moto',
  title: `moto ${MOTO_VERSION}`,
  portEnv: 'MOTO_PORT',
  defaultPort: 14566,
  probe,
  commandMarker: serverBin,
  describe: (port) => ({ url: `http://127.0.0.1:${port}` }),
  prepare: async (log) => {
    await install(log);
    return {
      command: serverBin,
      args: (port) => ['--host', '127.0.0.1', '--port', String(port)],
      // Its log lines reach server.out as they happen, not when a buffer fills.
      env: { PYTHONUNBUFFERED: '1' },
    };
  },
});

/**
 * Makes moto answer on 127.0.0.1:$MOTO_PORT, installing and starting it when needed.
 * @returns {Promise<{ url: string, startedByUs: boolean }>}
 */
export function ensureMoto({ log = () => {} } = {}) {
  return moto.ensure({ log });
}

/** Stops the moto server this checkout started; never one it did not start. */
export function stopMoto() {
  return moto.stop();
}

export const motoStatus = moto.status;
export const acquireMoto = moto.acquire;
export const releaseMoto = moto.release;
export const motoPaths = { venv, ...moto.paths };

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.exit(await moto.cli(process.argv.slice(2)));
}
