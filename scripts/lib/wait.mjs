// Small helpers shared by the infrastructure scripts (scripts/lib/kafka.mjs, postgres.mjs):
// polling with a deadline, a TCP probe, a cross-process lock so two `npm start` / `npm test` runs
// do not start the same server twice, and running a command with its output captured.
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export { sleep };

/**
 * Calls `probe` until it returns a truthy value or `timeoutMs` passes. A probe that throws counts
 * as "not yet"; its last error goes into the timeout message because it usually says why.
 * `stop` (optional) is checked between attempts and may throw to give up early (e.g. the process
 * we are waiting for has exited).
 */
export async function waitFor(probe, { timeoutMs, intervalMs = 250, what, stop }) {
  const deadline = Date.now() + timeoutMs;
  let lastError;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    if (stop) await stop();
    if (Date.now() >= deadline) {
      const why = lastError ? `: ${lastError.message}` : '';
      throw new Error(
        `timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}${why}`,
      );
    }
    await sleep(intervalMs);
  }
}

/** True when something accepts TCP connections on host:port (says nothing about the protocol). */
export function isPortOpen(port, host = '127.0.0.1', timeoutMs = 1000) {
  return new Promise((resolve) => {
    const socket = connect({ port, host });
    const done = (open) => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** True when `pid` is a live process (signal 0 only checks; EPERM means it exists but isn't ours). */
export function isAlive(pid) {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/**
 * Runs `fn` while holding an exclusive lock file (O_EXCL create). A lock left by a process that no
 * longer exists is taken over, so a crashed run never blocks the next one.
 */
export async function withLock(file, fn, { timeoutMs = 180_000 } = {}) {
  mkdirSync(dirname(file), { recursive: true });
  await waitFor(() => tryLock(file), {
    timeoutMs,
    what: `the lock ${file} (held by another infra script; delete the file if that is wrong)`,
  });
  try {
    return await fn();
  } finally {
    rmSync(file, { force: true });
  }
}

function tryLock(file) {
  try {
    const fd = openSync(file, 'wx');
    writeSync(fd, `${process.pid}\n`);
    closeSync(fd);
    return true;
  } catch (error) {
    if (error.code !== 'EEXIST') throw error;
  }
  let holder;
  let ageMs;
  try {
    holder = Number.parseInt(readFileSync(file, 'utf8'), 10);
    ageMs = Date.now() - statSync(file).mtimeMs;
  } catch {
    return false; // released between our open and read: try again next poll
  }
  // An empty file is a lock being written right now, unless it is old (its writer died mid-way).
  const stale = Number.isNaN(holder) ? ageMs > 5000 : !isAlive(holder);
  if (stale) rmSync(file, { force: true });
  return false;
}

/** The last `lines` lines of a text file, or '' when it does not exist. */
export function tail(file, lines = 30) {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/** Runs a command to completion, capturing stdout and stderr together (for error messages). */
export function run(command, args, options = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

/** The last `count` lines of a string. */
export function lastLines(text, count = 20) {
  return text.trimEnd().split('\n').slice(-count).join('\n');
}
