// Local PostgreSQL for development and tests: a project-owned cluster (its own data directory and
// port, 54329 by default) run by Debian's server binaries, so it never touches a system cluster on
// 5432. Reuses a server that already answers; with DATABASE_URL set it never starts anything.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  appendFileSync,
  chownSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmdirSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { dataDir } from './paths.mjs';
import { isPortOpen, lastLines, run, tail, waitFor, withLock } from './wait.mjs';

const repoHash = createHash('sha256').update(dataDir()).digest('hex').slice(0, 12);
// Where the cluster lives: <home>/data (PGDATA), <home>/server.log, <home>/socket.
const localHome = join(dataDir(), 'postgres');
// Used when the postgres system user cannot traverse the checkout's parent directories.
const fallbackHome = `/var/tmp/hookbase-pg-${repoHash}`;
const lockFile = join(dataDir(), 'postgres.lock');

const EXTERNAL_TIMEOUT_MS = 30_000;
const START_TIMEOUT_S = 60;
// Unix socket paths are limited to 107 bytes (sun_path); longer ones make the server fail.
const MAX_SOCKET_PATH = 100;

function clusterPort() {
  const port = Number(process.env.PGPORT_HOOKBASE || 54329);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new Error(`PGPORT_HOOKBASE must be a port number, got "${process.env.PGPORT_HOOKBASE}"`);
  }
  return port;
}

function localUrl(port = clusterPort()) {
  return `postgres://hookbase:hookbase@127.0.0.1:${port}/hookbase`;
}

/** The URL without its password, for printing. */
export function redactUrl(url) {
  try {
    const parsed = new URL(url);
    parsed.password = '';
    return parsed.toString();
  } catch {
    return '(unparsable URL)';
  }
}

// ---------------------------------------------------------------------------------------------
// Talking to a server

async function withClient(config, fn) {
  const client = new pg.Client({ connectionTimeoutMillis: 3000, ...config });
  // A server shutting down mid-query emits 'error' on the client; without a listener it crashes us.
  client.on('error', () => {});
  try {
    await client.connect();
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Resolves true when `url` accepts a login and answers `SELECT 1`; throws otherwise. */
function probe(url) {
  return withClient({ connectionString: url }, (client) => client.query('SELECT 1')).then(
    () => true,
  );
}

async function canQuery(url) {
  try {
    return await probe(url);
  } catch {
    return false;
  }
}

/**
 * Creates the application's role and database on the project cluster if missing, connecting as
 * the `postgres` superuser (trust authentication, see initCluster). CREATEDB lets tests create
 * throwaway databases.
 */
async function ensureRoleAndDatabase(port, log) {
  await withClient(
    { host: '127.0.0.1', port, user: 'postgres', database: 'postgres' },
    async (client) => {
      const role = await client.query("SELECT 1 FROM pg_roles WHERE rolname = 'hookbase'");
      if (role.rowCount === 0) {
        await client.query("CREATE ROLE hookbase LOGIN PASSWORD 'hookbase' CREATEDB");
        log('created role hookbase');
      }
      const db = await client.query("SELECT 1 FROM pg_database WHERE datname = 'hookbase'");
      if (db.rowCount === 0) {
        await client.query('CREATE DATABASE hookbase OWNER hookbase');
        log('created database hookbase');
      }
    },
  );
}

// ---------------------------------------------------------------------------------------------
// Server binaries and the postgres system user

function isRoot() {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

/** The newest /usr/lib/postgresql/<version>/bin that has initdb and pg_ctl (Debian's layout). */
function findServerBin() {
  const base = '/usr/lib/postgresql';
  let versions = [];
  try {
    versions = readdirSync(base).filter((name) => /^\d+(\.\d+)?$/.test(name));
  } catch {
    return undefined;
  }
  versions.sort((a, b) => Number(b) - Number(a));
  for (const version of versions) {
    const bin = join(base, version, 'bin');
    if (existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'pg_ctl'))) return bin;
  }
  return undefined;
}

async function installServer(log) {
  if (!isRoot()) {
    throw new Error(
      'PostgreSQL server binaries were not found (/usr/lib/postgresql/<version>/bin). Install ' +
        "Debian's package as root (`sudo apt-get install postgresql`), or set DATABASE_URL to a " +
        'running server.',
    );
  }
  log("PostgreSQL is not installed: installing Debian's postgresql package (apt-get)...");
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update'], ['install', '-y', 'postgresql']]) {
    const { code, output } = await run('apt-get', args, { env });
    if (code !== 0) {
      throw new Error(`apt-get ${args.join(' ')} failed (exit ${code}):\n${lastLines(output, 20)}`);
    }
  }
  // The package also creates (and may start) its own "main" cluster on port 5432; we leave it be.
  log('installed postgresql (its own "main" cluster on 5432 is not used by Hookbase)');
  const bin = findServerBin();
  if (!bin) throw new Error('apt-get installed postgresql but no server binaries were found');
  return bin;
}

/** uid/gid of the `postgres` system user that Debian's package creates. */
function postgresUser() {
  const uid = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0) {
    throw new Error(
      'PostgreSQL refuses to run as root and there is no `postgres` system user to run it as. ' +
        "Reinstall Debian's postgresql package (it creates the user) or run as a non-root user.",
    );
  }
  return { uid: Number(uid.stdout), gid: Number(gid.stdout) };
}

/**
 * Runs a server tool as the cluster's owner: PostgreSQL refuses to run as root, so as root it goes
 * through `runuser -u postgres`; otherwise the current user owns the cluster. The working
 * directory is the cluster's home because the postgres user may not be able to enter ours.
 */
function runAsOwner(home, command, args, options = {}) {
  const cwd = existsSync(home) ? home : '/';
  if (isRoot())
    return run('runuser', ['-u', 'postgres', '--', command, ...args], { cwd, ...options });
  return run(command, args, { cwd, ...options });
}

function ownerCan(test, path) {
  if (!isRoot()) return true;
  return (
    spawnSync('runuser', ['-u', 'postgres', '--', 'test', test, path], { cwd: '/' }).status === 0
  );
}

// ---------------------------------------------------------------------------------------------
// The cluster's home directory

const dataDirOf = (home) => join(home, 'data');
const logFileOf = (home) => join(home, 'server.log');

/** The home of an existing (initdb'ed) project cluster, if any. */
function existingHome() {
  return [localHome, fallbackHome].find((home) => existsSync(join(dataDirOf(home), 'PG_VERSION')));
}

/** Creates `dir` (and parents) and, as root, hands it to the postgres user. */
function makeOwnedDir(dir) {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (!isRoot()) return;
  const { uid, gid } = postgresUser();
  if (statSync(dir).uid !== uid) {
    // -R: a home created by an older run as root must become the server's entirely.
    const result = spawnSync('chown', ['-R', `${uid}:${gid}`, dir]);
    if (result.status !== 0) throw new Error(`chown -R postgres ${dir} failed`);
  }
}

/**
 * Picks and prepares the cluster's home: .data/postgres in the checkout, or, when the postgres
 * user cannot reach it (a parent directory without search permission for others, e.g. a checkout
 * under /root), a directory under /var/tmp named after a hash of the checkout's path.
 */
function prepareHome(log) {
  const found = existingHome();
  if (found) {
    makeOwnedDir(found);
    return found;
  }
  makeOwnedDir(localHome);
  if (ownerCan('-w', localHome) && ownerCan('-x', localHome)) return localHome;
  try {
    rmdirSync(localHome); // empty: we just created it
  } catch {
    // not empty or already gone: harmless, it is ignored from now on
  }
  log(
    `the postgres user cannot reach ${localHome} (a parent directory is not searchable by ` +
      `others), so the cluster lives in ${fallbackHome} instead`,
  );
  makeOwnedDir(fallbackHome);
  return fallbackHome;
}

/** The directory for the server's Unix socket: inside the home unless the path would be too long. */
function socketDirOf(home, port) {
  const preferred = join(home, 'socket');
  if (`${preferred}/.s.PGSQL.${port}`.length <= MAX_SOCKET_PATH) return preferred;
  return `/tmp/hookbase-pg-${repoHash}`;
}

// ---------------------------------------------------------------------------------------------
// Cluster lifecycle

/**
 * initdb with trust authentication: this is a local development cluster that listens on
 * 127.0.0.1 only (see writeSettings), so no password is needed to bootstrap roles. The app itself
 * still logs in as hookbase/hookbase, like it would against a real server.
 */
async function initCluster(bin, home, log) {
  const data = dataDirOf(home);
  if (existsSync(join(data, 'PG_VERSION'))) return;
  log(`initializing a PostgreSQL cluster in ${data}`);
  const { code, output } = await runAsOwner(home, join(bin, 'initdb'), [
    '-D',
    data,
    '--auth=trust',
    '-U',
    'postgres',
    '--encoding=UTF8',
    '--locale=C',
  ]);
  if (code !== 0) throw new Error(`initdb failed (exit ${code}):\n${lastLines(output, 20)}`);
  // Our settings live in their own file, rewritten on every start (the port may change).
  appendFileSync(
    join(data, 'postgresql.conf'),
    "\n# Hookbase: settings written by scripts/lib/postgres.mjs\ninclude_if_exists = 'hookbase.conf'\n",
  );
}

function writeSettings(home, port) {
  const socketDir = socketDirOf(home, port);
  makeOwnedDir(socketDir);
  const file = join(dataDirOf(home), 'hookbase.conf');
  writeFileSync(
    file,
    [
      '# Written by scripts/lib/postgres.mjs on every start; edits are lost.',
      "listen_addresses = '127.0.0.1'",
      `port = ${port}`,
      `unix_socket_directories = '${socketDir}'`,
      // The services, the test suite and its parallel workers each hold a pool.
      'max_connections = 300',
      'shared_buffers = 256MB',
      // fsync stays on (the default): this cluster holds real development data.
      '',
    ].join('\n'),
  );
  if (isRoot()) {
    const { uid, gid } = postgresUser();
    chownSync(file, uid, gid);
  }
}

/** pg_ctl status: 0 running, 3 not running, 4 no usable data directory. */
async function clusterRunning(bin, home) {
  const { code } = await runAsOwner(home, join(bin, 'pg_ctl'), ['-D', dataDirOf(home), 'status']);
  return code === 0;
}

async function startCluster(port, log) {
  const bin = findServerBin() ?? (await installServer(log));
  const home = prepareHome(log);
  await initCluster(bin, home, log);
  if (await clusterRunning(bin, home)) {
    // Running, yet nothing answers on our port: it was started with another PGPORT_HOOKBASE, and
    // whoever uses it there would break if we moved it.
    throw new Error(
      `this checkout's PostgreSQL cluster is running on port ${postmasterPort(home) ?? '?'}, not ` +
        `PGPORT_HOOKBASE=${port}. Run \`node scripts/infra.mjs down\` first to move it.`,
    );
  }
  writeSettings(home, port);
  log(`starting PostgreSQL (logs in ${logFileOf(home)})`);
  const { code, output } = await runAsOwner(
    home,
    join(bin, 'pg_ctl'),
    ['-D', dataDirOf(home), '-l', logFileOf(home), '-w', '-t', String(START_TIMEOUT_S), 'start'],
    // Its own process group: a Ctrl-C in the terminal that ran us must not reach the server.
    { detached: true },
  );
  if (code !== 0) {
    throw new Error(
      `pg_ctl start failed (exit ${code}):\n${lastLines(output, 10)}\n` +
        `--- ${logFileOf(home)} (last lines) ---\n${tail(logFileOf(home), 25)}`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Public API

/**
 * Makes PostgreSQL available with the hookbase role and database.
 * @returns {Promise<{ url: string, startedByUs: boolean }>}
 */
export async function ensurePostgres({ log = () => {} } = {}) {
  const external = process.env.DATABASE_URL;
  if (external) {
    log(`DATABASE_URL is set: waiting for ${redactUrl(external)} (nothing is started)`);
    await waitFor(() => probe(external), {
      timeoutMs: EXTERNAL_TIMEOUT_MS,
      intervalMs: 500,
      what: `DATABASE_URL (${redactUrl(external)}) to answer`,
    });
    return { url: external, startedByUs: false };
  }
  const port = clusterPort();
  const url = localUrl(port);
  return withLock(lockFile, async () => {
    if (await canQuery(url)) {
      log(`reusing the PostgreSQL server on 127.0.0.1:${port}`);
      return { url, startedByUs: false };
    }
    if (await isPortOpen(port)) {
      await adoptRunningServer(port, log);
      return { url, startedByUs: false };
    }
    await startCluster(port, log);
    await ensureRoleAndDatabase(port, log);
    return { url, startedByUs: true };
  });
}

/**
 * Something listens on our port but hookbase cannot log in: most likely our cluster after a run
 * that stopped before creating the role, or one still starting. Bootstrapping as the trusted
 * postgres superuser fixes the first; anything else is another program we must not touch.
 */
async function adoptRunningServer(port, log) {
  try {
    await waitFor(() => ensureRoleAndDatabase(port, log).then(() => true), {
      timeoutMs: 15_000,
      intervalMs: 500,
      what: `the server on 127.0.0.1:${port}`,
    });
  } catch (error) {
    throw new Error(
      `port ${port} is in use by a server where neither hookbase/hookbase nor a trusted postgres ` +
        `superuser can log in (${error.message}). Stop it, set PGPORT_HOOKBASE to a free port, or ` +
        'set DATABASE_URL to use it.',
    );
  }
  log(`reusing the PostgreSQL server on 127.0.0.1:${port}`);
}

/**
 * Stops the project cluster (`pg_ctl stop -m fast`), wherever its home is. A DATABASE_URL server
 * or a system cluster is never touched.
 * @returns {Promise<{ stopped: boolean, dataDir?: string }>}
 */
export async function stopPostgres() {
  const home = existingHome();
  const bin = findServerBin();
  if (!home || !bin || !(await clusterRunning(bin, home))) return { stopped: false };
  const data = dataDirOf(home);
  const { code, output } = await runAsOwner(home, join(bin, 'pg_ctl'), [
    '-D',
    data,
    '-m',
    'fast',
    '-w',
    '-t',
    '60',
    'stop',
  ]);
  if (code !== 0) throw new Error(`pg_ctl stop failed (exit ${code}):\n${lastLines(output, 10)}`);
  return { stopped: true, dataDir: data };
}

/**
 * @returns {Promise<{ running: boolean, url: string, external: boolean, pid?: number,
 *   dataDir?: string, detail: string }>}
 */
export async function postgresStatus() {
  const external = Boolean(process.env.DATABASE_URL);
  const url = process.env.DATABASE_URL || localUrl();
  const home = external ? undefined : existingHome();
  const pid = home ? postmasterPid(home) : undefined;
  const dataDir = home ? dataDirOf(home) : undefined;
  try {
    await probe(url);
    const owner = external ? 'external (DATABASE_URL)' : pid ? `pid ${pid}` : 'not started by us';
    return { running: true, url, external, pid, dataDir, detail: `up, ${owner}` };
  } catch (error) {
    return { running: false, url, external, pid, dataDir, detail: `down (${error.message})` };
  }
}

/** Line `index` of postmaster.pid as a number (0: pid, 3: port), if the server left the file. */
function postmasterField(home, index) {
  try {
    const lines = readFileSync(join(dataDirOf(home), 'postmaster.pid'), 'utf8').split('\n');
    const value = Number.parseInt(lines[index], 10);
    return Number.isInteger(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

const postmasterPid = (home) => postmasterField(home, 0);
const postmasterPort = (home) => postmasterField(home, 3);
