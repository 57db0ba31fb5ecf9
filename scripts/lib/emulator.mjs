// A local emulator process (moto's server, the Pub/Sub fake) managed like scripts/lib/kafka.mjs
// manages the broker: installed or built once into .cache by `prepare`, started detached on a
// loopback port so it outlives the script that started it, its pid and output under
// .data/<name>/, reused when something on the port already answers as that emulator, and stopped
// only when this checkout started it.
//
// Test files share one emulator through leases: `acquire(holder)` starts or reuses it and records
// the holder (a pid); `release(holder)` drops the lease and stops the emulator once no live
// holder is left, but only if it was started for a lease (an emulator that `up` or another
// program started stays up). Jest runs test files in parallel workers, so this is what lets each
// file start what it needs without one file stopping the emulator under another.
import { spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { dataDir as dataRoot, root } from './paths.mjs';
import { isAlive, isPortOpen, tail, waitFor, withLock } from './wait.mjs';

export { root };

const STOP_TIMEOUT_MS = 10_000;
// Installing or building on a fresh machine happens under the lock, so waiters wait for it.
const LOCK_TIMEOUT_MS = 600_000;

/**
 * @param {object} spec
 * @param {string} spec.name short name: .data/<name>/, lock .data/<name>.lock
 * @param {string} spec.title what log lines and errors call it
 * @param {string} spec.portEnv environment variable that moves the port
 * @param {number} spec.defaultPort
 * @param {(port: number) => Promise<boolean>} spec.probe true when the port answers as this emulator
 * @param {(log: (line: string) => void) => Promise<{ command: string, args: (port: number) =>
 *   string[], env?: Record<string, string> }>} spec.prepare installs or builds once, says how to run
 * @param {string} spec.commandMarker a string in the command line of the processes we start
 * @param {(port: number) => object} spec.describe what callers get, e.g. `{ url }`
 * @param {number} [spec.readyTimeoutMs]
 */
export function localEmulator(spec) {
  const dataDir = join(dataRoot(), spec.name);
  const pidFile = join(dataDir, 'server.pid');
  const outFile = join(dataDir, 'server.out');
  const leasesDir = join(dataDir, 'leases');
  const leaseStartMarker = join(dataDir, 'started-for-leases');
  const lockFile = join(dataRoot(), `${spec.name}.lock`);
  const readyTimeoutMs = spec.readyTimeoutMs ?? 60_000;

  function port() {
    const raw = process.env[spec.portEnv];
    const value = Number(raw || spec.defaultPort);
    if (!Number.isInteger(value) || value < 1 || value > 65535) {
      throw new Error(`${spec.portEnv} must be a port number, got "${raw}"`);
    }
    return value;
  }

  function cmdline(pid) {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
    } catch {
      return '';
    }
  }

  /** The pid of the emulator this checkout started, if it is still that process (pids get reused). */
  function ourPid() {
    try {
      const pid = Number.parseInt(readFileSync(pidFile, 'utf8'), 10);
      if (isAlive(pid) && cmdline(pid).includes(spec.commandMarker)) return pid;
    } catch {
      // no pid file
    }
    return undefined;
  }

  function output() {
    const text = tail(outFile, 25);
    return text ? `--- ${outFile} (last lines) ---\n${text}` : '(it wrote no output)';
  }

  async function start(portNumber, log) {
    const how = await spec.prepare(log);
    mkdirSync(dataDir, { recursive: true });
    const out = openSync(outFile, 'w');
    let child;
    try {
      child = spawn(how.command, how.args(portNumber), {
        cwd: dataDir,
        detached: true,
        stdio: ['ignore', out, out],
        env: { ...process.env, ...how.env },
      });
    } finally {
      closeSync(out);
    }
    let exit;
    child.once('exit', (code, signal) => (exit = signal ? `signal ${signal}` : `code ${code}`));
    child.once('error', (error) => (exit = error.message));
    child.unref();
    writeFileSync(pidFile, `${child.pid}\n`);
    log(
      `starting ${spec.title} on 127.0.0.1:${portNumber} (pid ${child.pid}, output in ${outFile})`,
    );
    try {
      await waitFor(() => spec.probe(portNumber), {
        timeoutMs: readyTimeoutMs,
        intervalMs: 200,
        what: `${spec.title} on 127.0.0.1:${portNumber}`,
        stop: async () => {
          if (exit) throw new Error(`${spec.title} exited with ${exit} while starting`);
        },
      });
    } catch (error) {
      if (!exit) await stop();
      rmSync(pidFile, { force: true });
      throw new Error(`${error.message}\n${output()}`);
    }
  }

  /** @returns {Promise<boolean>} whether it was started now */
  async function reuseOrStart(log) {
    const portNumber = port();
    const pid = ourPid();
    if (await spec.probe(portNumber).catch(() => false)) {
      log(`reusing ${spec.title} on 127.0.0.1:${portNumber}${pid ? ` (pid ${pid})` : ''}`);
      return false;
    }
    if (pid) {
      // Ours, alive, not answering yet: an earlier start still booting, or stuck. Give it the
      // usual time, then replace it.
      try {
        await waitFor(() => spec.probe(portNumber), {
          timeoutMs: readyTimeoutMs,
          intervalMs: 200,
          what: `${spec.title} (pid ${pid}) to answer on 127.0.0.1:${portNumber}`,
        });
        log(`reusing ${spec.title} on 127.0.0.1:${portNumber} (pid ${pid})`);
        return false;
      } catch (error) {
        log(`${error.message}; restarting it`);
        await stop();
      }
    }
    if (await isPortOpen(portNumber)) {
      throw new Error(
        `port ${portNumber} is in use by a program that does not answer as ${spec.title}; ` +
          `stop it or set ${spec.portEnv} to a free port`,
      );
    }
    await start(portNumber, log);
    return true;
  }

  /**
   * Makes the emulator answer on its port (starting it when nothing does).
   * @returns {Promise<object>} `describe(port)` plus `startedByUs`
   */
  async function ensure({ log = () => {} } = {}) {
    const startedByUs = await withLock(lockFile, () => reuseOrStart(log), {
      timeoutMs: LOCK_TIMEOUT_MS,
    });
    return { ...spec.describe(port()), startedByUs };
  }

  /**
   * Stops the emulator this checkout started (SIGTERM, SIGKILL after 10 s); one we did not
   * start is never touched.
   * @returns {Promise<{ stopped: boolean, pid?: number }>}
   */
  async function stop() {
    const pid = ourPid();
    rmSync(leaseStartMarker, { force: true });
    if (!pid) {
      rmSync(pidFile, { force: true });
      return { stopped: false };
    }
    // It runs in a process group of its own (detached): signal the group, so helpers die too.
    const signal = (name) => {
      try {
        process.kill(-pid, name);
      } catch {
        try {
          process.kill(pid, name);
        } catch {
          // already gone
        }
      }
    };
    signal('SIGTERM');
    try {
      await waitFor(() => !isAlive(pid), { timeoutMs: STOP_TIMEOUT_MS, what: `${spec.title}` });
    } catch {
      signal('SIGKILL');
      await waitFor(() => !isAlive(pid), { timeoutMs: 5000, what: `${spec.title} to die` });
    }
    rmSync(pidFile, { force: true });
    return { stopped: true, pid };
  }

  function liveLeases() {
    let entries = [];
    try {
      entries = readdirSync(leasesDir);
    } catch {
      return [];
    }
    const live = [];
    for (const entry of entries) {
      const holder = Number(entry);
      if (isAlive(holder)) live.push(holder);
      else rmSync(join(leasesDir, entry), { force: true }); // its holder died without releasing
    }
    return live;
  }

  /** Starts or reuses the emulator for `holder` (a live pid) until it calls `release`. */
  async function acquire({ holder, log = () => {} }) {
    if (!isAlive(holder)) throw new Error(`lease holder ${holder} is not a live process`);
    return withLock(
      lockFile,
      async () => {
        const startedByUs = await reuseOrStart(log);
        mkdirSync(leasesDir, { recursive: true });
        if (startedByUs) writeFileSync(leaseStartMarker, `${holder}\n`);
        writeFileSync(join(leasesDir, String(holder)), '');
        return { ...spec.describe(port()), startedByUs };
      },
      { timeoutMs: LOCK_TIMEOUT_MS },
    );
  }

  /** Drops `holder`'s lease; stops the emulator when it was started for leases and none is left. */
  async function release({ holder, log = () => {} }) {
    return withLock(lockFile, async () => {
      rmSync(join(leasesDir, String(holder)), { force: true });
      if (liveLeases().length > 0 || !existsSync(leaseStartMarker)) return { stopped: false };
      const result = await stop();
      if (result.stopped) log(`stopped ${spec.title} (pid ${result.pid}): no test uses it`);
      return result;
    });
  }

  async function status() {
    const portNumber = port();
    const pid = ourPid();
    const up = await spec.probe(portNumber).catch(() => false);
    const owner = pid ? `pid ${pid}` : 'not started by this checkout';
    return {
      running: up,
      ...spec.describe(portNumber),
      pid,
      detail: up ? `up, ${owner}` : pid ? `process ${pid} alive but not answering` : 'down',
    };
  }

  /** Installs or builds it (once, under its lock), without starting it. */
  async function prepare({ log = () => {} } = {}) {
    await withLock(lockFile, () => spec.prepare(log), { timeoutMs: LOCK_TIMEOUT_MS });
  }

  /**
   * `node <script> up|down|status|prepare|acquire <pid>|release <pid>`. `acquire` prints one JSON
   * line on stdout (what the test helpers read); everything else is logged to stderr.
   */
  async function cli(argv) {
    const [command, holderArg] = argv;
    const log = (line) => console.error(`[${spec.name}] ${line}`);
    const holder = Number(holderArg);
    try {
      switch (command) {
        case 'up':
          console.log(JSON.stringify(await ensure({ log })));
          return 0;
        case 'down': {
          const result = await stop();
          console.log(
            `${spec.title}: ${result.stopped ? `stopped (pid ${result.pid})` : 'was not running (or not ours)'}`,
          );
          return 0;
        }
        case 'status': {
          const result = await status();
          console.log(`${spec.title}: ${JSON.stringify(spec.describe(port()))}: ${result.detail}`);
          return result.running ? 0 : 1;
        }
        case 'prepare':
          await prepare({ log });
          return 0;
        case 'acquire':
          console.log(JSON.stringify(await acquire({ holder, log })));
          return 0;
        case 'release':
          console.log(JSON.stringify(await release({ holder, log })));
          return 0;
        default:
          console.error(`usage: node <script> up|down|status|prepare|acquire <pid>|release <pid>`);
          return 64;
      }
    } catch (error) {
      console.error(`✘ ${spec.title}: ${error.message}`);
      return 1;
    }
  }

  return {
    ensure,
    stop,
    status,
    prepare,
    acquire,
    release,
    cli,
    port,
    paths: { dataDir, outFile },
  };
}
