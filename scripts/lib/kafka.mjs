// Local Apache Kafka for development and tests: a single KRaft node (broker + controller) run
// from the official jars on Maven Central with the machine's Java, no Docker. Reuses a broker that
// already answers; with KAFKA_BROKERS set it never starts anything.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import kafkajs from 'kafkajs';
import { dataDir as dataRoot } from './paths.mjs';
import { isAlive, isPortOpen, lastLines, run, tail, waitFor, withLock } from './wait.mjs';

const { Kafka, logLevel } = kafkajs;

// kafkajs re-arms an idle per-connection timer every 1 ms (a negative delay, which Node 24 reports
// as TimeoutNegativeWarning): the same fix as libs/kafka/src/request-queue-timer.ts, which says why.
// Checks the queue only while requests are held back: at the end of a throttle, else after 10 ms.
createRequire(import.meta.url)(
  'kafkajs/src/network/requestQueue',
).prototype.scheduleCheckPendingRequests = function scheduleCheckPendingRequests() {
  if (this.throttleCheckTimeoutId || this.pending.length === 0) return;
  const untilThrottleEnds = this.throttledUntil - Date.now();
  this.throttleCheckTimeoutId = setTimeout(
    () => {
      this.throttleCheckTimeoutId = null;
      this.checkPendingRequests();
    },
    untilThrottleEnds > 0 ? untilThrottleEnds : 10,
  );
};

export const KAFKA_VERSION = '4.1.1';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const catalogFile = join(root, 'libs', 'kafka', 'src', 'topic-catalog.json');
const pomFile = join(root, 'deploy', 'kafka', 'pom.xml');
const log4jFile = join(root, 'deploy', 'kafka', 'log4j2.yaml');
const libsDir = join(root, '.cache', 'kafka', KAFKA_VERSION, 'libs');
const libsMarker = join(libsDir, '.complete');
const dataDir = join(dataRoot(), 'kafka');
const storageDir = join(dataDir, 'data');
const logsDir = join(dataDir, 'logs');
const propsFile = join(dataDir, 'server.properties');
const pidFile = join(dataDir, 'broker.pid');
const outFile = join(dataDir, 'broker.out');
const lockFile = join(dataRoot(), 'kafka.lock');

const READY_TIMEOUT_MS = 90_000;
const STOP_TIMEOUT_MS = 30_000;
const PROBE_GROUP = 'hookbase-infra-probe';

function brokerPort() {
  const port = Number(process.env.KAFKA_PORT || 19092);
  if (!Number.isInteger(port) || port < 1 || port > 65534) {
    throw new Error(
      `KAFKA_PORT must be a port number below 65535, got "${process.env.KAFKA_PORT}"`,
    );
  }
  return port;
}

function localBrokers() {
  return `127.0.0.1:${brokerPort()}`;
}

function topicPrefix() {
  return process.env.HOOKBASE_TOPIC_PREFIX || 'hookbase';
}

/** A client that fails fast: the callers poll, so kafkajs' own retries only add delay. */
function kafkaClient(brokers) {
  return new Kafka({
    clientId: 'hookbase-infra',
    brokers: brokers.split(',').map((broker) => broker.trim()),
    logLevel: logLevel.NOTHING,
    connectionTimeout: 2000,
    requestTimeout: 5000,
    retry: { retries: 0 },
  });
}

function admin(brokers) {
  return kafkaClient(brokers).admin();
}

async function withAdmin(brokers, fn) {
  const adminClient = admin(brokers);
  try {
    await adminClient.connect();
    return await fn(adminClient);
  } finally {
    await adminClient.disconnect().catch(() => {});
  }
}

/** Resolves when a Kafka broker answers a metadata request; throws otherwise. */
function probeKafka(brokers) {
  return withAdmin(brokers, (client) => client.listTopics()).then(() => true);
}

/**
 * The group coordinator answers only once __consumer_offsets exists and its partitions are
 * loaded; until then consumer groups get "coordinator not available / loading" errors. Describing
 * a group that never exists is a cheap request that goes through FindCoordinator and the
 * coordinator itself (the first call also makes the broker create __consumer_offsets).
 */
function probeGroupCoordinator(brokers) {
  return withAdmin(brokers, async (client) => {
    // kafkajs looks the coordinator up through brokers known from metadata, which a fresh admin
    // client has not fetched yet ("No brokers in the broker pool"): listTopics fetches it.
    await client.listTopics();
    await client.describeGroups([PROBE_GROUP]);
    return true;
  });
}

/**
 * An idempotent producer's first call (InitProducerId) fails with "coordinator is loading" until
 * the broker has fetched its first block of producer ids from the controller. Connecting one
 * (kafkajs runs InitProducerId on connect) proves the services' producers will not hit that.
 */
async function probeProducerIds(brokers) {
  // kafkajs refuses an idempotent producer without retries; one quick retry is enough here.
  const producer = kafkaClient(brokers).producer({
    idempotent: true,
    maxInFlightRequests: 1,
    retry: { retries: 1, initialRetryTime: 100, maxRetryTime: 500 },
  });
  try {
    await producer.connect();
    return true;
  } finally {
    await producer.disconnect().catch(() => {});
  }
}

async function waitUntilReady(brokers, { timeoutMs = READY_TIMEOUT_MS, stop } = {}) {
  const deadline = Date.now() + timeoutMs;
  await waitFor(() => probeKafka(brokers), {
    timeoutMs,
    intervalMs: 500,
    what: `Kafka at ${brokers}`,
    stop,
  });
  const rest = () => Math.max(deadline - Date.now(), 5000);
  await waitFor(() => probeGroupCoordinator(brokers), {
    timeoutMs: rest(),
    intervalMs: 250,
    what: `the group coordinator of Kafka at ${brokers}`,
    stop,
  });
  await waitFor(() => probeProducerIds(brokers), {
    timeoutMs: rest(),
    intervalMs: 250,
    what: `idempotent producers to be accepted by Kafka at ${brokers}`,
    stop,
  });
}

// ---------------------------------------------------------------------------------------------
// Topics

function readCatalog() {
  return JSON.parse(readFileSync(catalogFile, 'utf8')).topics;
}

/**
 * Creates the catalog's topics under `prefix` when missing (replication factor 1: a dev broker).
 * Existing topics are left alone; a partition count that differs from the catalog is reported,
 * not changed, because shrinking is impossible and growing reshuffles keys.
 */
export async function ensureTopics(brokers, prefix = topicPrefix(), { log = () => {} } = {}) {
  const wanted = readCatalog().map((entry) => ({
    topic: `${prefix}.${entry.suffix}`,
    numPartitions: entry.partitions,
    replicationFactor: 1,
    configEntries: Object.entries(entry.config ?? {}).map(([name, value]) => ({
      name,
      value: String(value),
    })),
  }));
  return withAdmin(brokers, async (client) => {
    const existing = new Set(await client.listTopics());
    const missing = wanted.filter(({ topic }) => !existing.has(topic));
    if (missing.length > 0) {
      // Another process may create the same topics meanwhile: kafkajs then returns false
      // ("already exists") instead of throwing, which is what we want.
      await client.createTopics({ topics: missing, waitForLeaders: true, timeout: 15_000 });
      log(`created topics ${missing.map(({ topic }) => topic).join(', ')}`);
    }
    const { topics } = await client.fetchTopicMetadata({
      topics: wanted.map(({ topic }) => topic),
    });
    for (const { name, partitions } of topics) {
      const expected = wanted.find(({ topic }) => topic === name).numPartitions;
      if (partitions.length !== expected) {
        log(
          `warning: topic ${name} has ${partitions.length} partitions, the catalog says ${expected}`,
        );
      }
    }
    return wanted.map(({ topic }) => topic);
  });
}

// ---------------------------------------------------------------------------------------------
// Prerequisites: Java and the broker's jars

function javaMajorVersion() {
  const result = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (result.error) return undefined;
  // `java -version` prints to stderr: openjdk version "17.0.15" ... (or "1.8.0_392" for Java 8).
  const match = /version "(\d+)(?:\.(\d+))?/.exec(`${result.stderr}${result.stdout}`);
  if (!match) return undefined;
  return match[1] === '1' ? Number(match[2]) : Number(match[1]);
}

function requireJava() {
  const major = javaMajorVersion();
  if (major === undefined) {
    throw new Error(
      'Kafka needs Java 17 or newer and `java` was not found on PATH. Install it with ' +
        '`apt-get install openjdk-17-jre-headless maven`, or point KAFKA_BROKERS at a running broker.',
    );
  }
  if (major < 17) {
    throw new Error(
      `Kafka ${KAFKA_VERSION} needs Java 17 or newer; \`java\` on PATH is Java ${major}. Install ` +
        '`apt-get install openjdk-17-jre-headless` and make it the default (update-alternatives).',
    );
  }
}

function requireMaven() {
  const result = spawnSync('mvn', ['--version'], { encoding: 'utf8' });
  if (result.error || result.status !== 0) {
    throw new Error(
      `Fetching the Kafka ${KAFKA_VERSION} jars needs Maven (\`mvn\`), which was not found. ` +
        'Install it with `apt-get install openjdk-17-jre-headless maven`.',
    );
  }
}

/** Identifies what the cached jars were fetched for: a pom edit must refetch them. */
function pomDigest() {
  return createHash('sha256').update(readFileSync(pomFile)).digest('hex');
}

function jarsAreComplete() {
  if (!existsSync(libsMarker)) return false;
  try {
    const marker = JSON.parse(readFileSync(libsMarker, 'utf8'));
    return marker.pom === pomDigest() && marker.jars.every((jar) => existsSync(join(libsDir, jar)));
  } catch {
    return false;
  }
}

/**
 * Copies kafka_2.13 and its runtime dependencies from Maven Central (via ~/.m2) into
 * .cache/kafka/<version>/libs. Maven writes into a temporary directory that is renamed into place,
 * and the marker is written last, so an interrupted fetch is never mistaken for a complete one.
 */
async function ensureJars(log) {
  if (jarsAreComplete()) return;
  requireMaven();
  log(`fetching Kafka ${KAFKA_VERSION} jars from Maven Central (once, into .cache/kafka)...`);
  const staging = `${libsDir}.tmp-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  const args = [
    '-q',
    '-B',
    '-Dstyle.color=never',
    '-f',
    pomFile,
    'dependency:copy-dependencies',
    `-DoutputDirectory=${staging}`,
    '-DincludeScope=runtime',
  ];
  const { code, output } = await run('mvn', args, { cwd: dirname(pomFile) });
  if (code !== 0) {
    rmSync(staging, { recursive: true, force: true });
    throw new Error(`mvn could not fetch the Kafka jars (exit ${code}):\n${lastLines(output, 30)}`);
  }
  const jars = readdirSync(staging).filter((name) => name.endsWith('.jar'));
  if (!jars.some((name) => name.startsWith(`kafka_2.13-${KAFKA_VERSION}`))) {
    throw new Error(`mvn finished but ${staging} has no kafka_2.13-${KAFKA_VERSION} jar`);
  }
  rmSync(libsDir, { recursive: true, force: true });
  mkdirSync(dirname(libsDir), { recursive: true });
  renameSync(staging, libsDir);
  writeFileSync(libsMarker, `${JSON.stringify({ pom: pomDigest(), jars }, null, 2)}\n`);
  log(`fetched ${jars.length} jars`);
}

// ---------------------------------------------------------------------------------------------
// The broker process

function classpath() {
  return `${libsDir}/*`;
}

function javaTool(mainClass, args) {
  return run('java', ['-cp', classpath(), mainClass, ...args], { cwd: dataDir });
}

function writeServerProperties(port) {
  const controllerPort = port + 1;
  const properties = {
    // One node that is both broker and KRaft controller: the smallest real Kafka.
    'process.roles': 'broker,controller',
    'node.id': 1,
    listeners: `PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    'advertised.listeners': `PLAINTEXT://127.0.0.1:${port}`,
    'controller.listener.names': 'CONTROLLER',
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'controller.quorum.bootstrap.servers': `127.0.0.1:${controllerPort}`,
    'log.dirs': storageDir,
    // A single node cannot hold more than one replica of the internal topics.
    'offsets.topic.replication.factor': 1,
    'transaction.state.log.replication.factor': 1,
    'transaction.state.log.min.isr': 1,
    'share.coordinator.state.topic.replication.factor': 1,
    'share.coordinator.state.topic.min.isr': 1,
    // Tests create consumer groups constantly; the default 3 s delay would slow every one of them.
    'group.initial.rebalance.delay.ms': 0,
    // Topics come from the catalog (ensureTopics); a typo must fail instead of creating a topic.
    'auto.create.topics.enable': false,
  };
  const text = Object.entries(properties)
    .map(([key, value]) => `${key}=${value}`)
    .join('\n');
  writeFileSync(
    propsFile,
    `# Generated by scripts/lib/kafka.mjs on every start; edits are lost.\n${text}\n`,
  );
}

/** Formats the KRaft storage once; a formatted log dir keeps its cluster id and topics. */
async function formatStorageOnce(log) {
  if (existsSync(join(storageDir, 'meta.properties'))) return;
  const id = await javaTool('kafka.tools.StorageTool', ['random-uuid']);
  const clusterId = id.output.trim().split('\n').pop();
  if (id.code !== 0 || !/^[A-Za-z0-9_-]{22}$/.test(clusterId)) {
    throw new Error(`kafka.tools.StorageTool random-uuid failed:\n${lastLines(id.output, 20)}`);
  }
  const format = await javaTool('kafka.tools.StorageTool', [
    'format',
    '-t',
    clusterId,
    '-c',
    propsFile,
    '--standalone',
  ]);
  if (format.code !== 0) {
    throw new Error(`formatting the Kafka storage failed:\n${lastLines(format.output, 20)}`);
  }
  log(`formatted KRaft storage in ${storageDir} (cluster id ${clusterId})`);
}

/** Starts the broker in its own process group so it outlives this script and its Ctrl-C. */
function spawnBroker() {
  const out = openSync(outFile, 'w');
  try {
    const child = spawn(
      'java',
      [
        '-Xms256m',
        '-Xmx768m',
        '-Djava.awt.headless=true',
        `-Dlog4j2.configurationFile=${log4jFile}`,
        `-Dkafka.logs.dir=${logsDir}`,
        '-cp',
        classpath(),
        'kafka.Kafka',
        propsFile,
      ],
      { cwd: dataDir, detached: true, stdio: ['ignore', out, out] },
    );
    child.unref();
    writeFileSync(pidFile, `${child.pid}\n`);
    return child;
  } finally {
    closeSync(out);
  }
}

/** The command line of a live process, '' if it is gone or unreadable. */
function cmdline(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
}

/** A pid is "our broker" only if it runs kafka.Kafka on our properties file (pids get reused). */
function isOurBroker(pid) {
  const command = cmdline(pid);
  return command.includes('kafka.Kafka') && command.includes(propsFile);
}

/**
 * The pid of the broker this checkout started, from broker.pid or, if that file is gone, by
 * looking for a java process on our properties file.
 */
function findBrokerPid() {
  try {
    const pid = Number.parseInt(readFileSync(pidFile, 'utf8'), 10);
    if (isAlive(pid) && isOurBroker(pid)) return pid;
  } catch {
    // no pid file: fall through to the scan
  }
  try {
    for (const entry of readdirSync('/proc')) {
      const pid = Number(entry);
      if (Number.isInteger(pid) && isOurBroker(pid)) return pid;
    }
  } catch {
    // no /proc (not Linux): the pid file is all we have
  }
  return undefined;
}

function brokerLogs() {
  const parts = [];
  const out = tail(outFile, 25);
  if (out) parts.push(`--- ${outFile} (last lines) ---\n${out}`);
  const server = tail(join(logsDir, 'server.log'), 25);
  if (server) parts.push(`--- ${join(logsDir, 'server.log')} (last lines) ---\n${server}`);
  return parts.join('\n') || '(the broker wrote no output)';
}

async function startBroker(port, log) {
  if (await isPortOpen(port + 1)) {
    throw new Error(
      `Kafka's controller port ${port + 1} (KAFKA_PORT + 1) is already in use by another ` +
        'program; choose another KAFKA_PORT.',
    );
  }
  requireJava();
  await ensureJars(log);
  mkdirSync(logsDir, { recursive: true });
  writeServerProperties(port);
  await formatStorageOnce(log);
  const child = spawnBroker();
  log(`starting Kafka ${KAFKA_VERSION} (pid ${child.pid}, logs in ${join(logsDir, 'server.log')})`);
  let exit;
  child.once('exit', (code, signal) => (exit = signal ? `signal ${signal}` : `code ${code}`));
  // Stop waiting as soon as the JVM dies: its output says why, no need to sit out the timeout.
  const stop = async () => {
    if (exit) throw new Error(`the Kafka broker exited with ${exit} while starting`);
  };
  try {
    await waitUntilReady(localBrokers(), { stop });
  } catch (error) {
    if (exit) rmSync(pidFile, { force: true });
    else await stopKafka();
    throw new Error(`${error.message}\n${brokerLogs()}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Public API

/**
 * Makes a Kafka broker available and the catalog's topics exist on it.
 * @returns {Promise<{ brokers: string, startedByUs: boolean }>}
 */
export async function ensureKafka({ log = () => {} } = {}) {
  const external = process.env.KAFKA_BROKERS;
  if (external) {
    log(`KAFKA_BROKERS is set: waiting for ${external} (nothing is started)`);
    await waitUntilReady(external, { timeoutMs: 60_000 }).catch((error) => {
      throw new Error(`KAFKA_BROKERS=${external} is not usable: ${error.message}`);
    });
    return { brokers: external, startedByUs: false };
  }
  const port = brokerPort();
  const brokers = localBrokers();
  const startedByUs = await withLock(lockFile, () => reuseOrStart(port, log));
  await ensureTopics(brokers, topicPrefix(), { log });
  return { brokers, startedByUs };
}

/** The PLAINTEXT port in server.properties, i.e. the port the running broker was started with. */
function configuredPort() {
  try {
    const match = /^listeners=PLAINTEXT:\/\/[^:]+:(\d+)/m.exec(readFileSync(propsFile, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

async function reuseOrStart(port, log) {
  const brokers = `127.0.0.1:${port}`;
  const pid = findBrokerPid();
  const runningPort = pid ? configuredPort() : undefined;
  if (pid && runningPort !== undefined && runningPort !== port) {
    // One data directory, one broker: a second one on another port would fight over its lock.
    throw new Error(
      `this checkout's Kafka broker is running on port ${runningPort} (pid ${pid}), not ` +
        `KAFKA_PORT=${port}. Run \`node scripts/infra.mjs down\` first to move it.`,
    );
  }
  if (await isPortOpen(port)) {
    // Something listens: reuse it if it is Kafka (ours or not). A broker still booting (ours,
    // started by an earlier run that gave up) gets the full timeout.
    try {
      await waitUntilReady(brokers, { timeoutMs: pid ? READY_TIMEOUT_MS : 15_000 });
    } catch (error) {
      if (pid) throw new Error(`our Kafka broker (pid ${pid}) is not ready: ${error.message}`);
      throw new Error(
        `port ${port} is in use but does not answer as a Kafka broker (${error.message}). ` +
          'Stop that program or set KAFKA_PORT to a free port.',
      );
    }
    log(`reusing the Kafka broker at ${brokers}${pid ? ` (pid ${pid})` : ''}`);
    return false;
  }
  if (pid) {
    // Our JVM is alive but not listening yet (still booting): wait for it, don't start another.
    log(`waiting for the Kafka broker that is starting (pid ${pid})`);
    await waitUntilReady(brokers).catch((error) => {
      throw new Error(`${error.message}\n${brokerLogs()}`);
    });
    return false;
  }
  await startBroker(port, log);
  return true;
}

/**
 * Stops the broker this checkout started (SIGTERM, then SIGKILL after 30 s). Brokers we did not
 * start (KAFKA_BROKERS, or another program on the port) are never touched.
 * @returns {Promise<{ stopped: boolean, pid?: number }>}
 */
export async function stopKafka() {
  const pid = findBrokerPid();
  if (!pid) {
    rmSync(pidFile, { force: true });
    return { stopped: false };
  }
  process.kill(pid, 'SIGTERM');
  try {
    await waitFor(() => !isAlive(pid), {
      timeoutMs: STOP_TIMEOUT_MS,
      what: 'Kafka to stop',
    });
  } catch {
    // A controlled shutdown that hangs (e.g. a stuck log flush) must not block `down` forever.
    process.kill(pid, 'SIGKILL');
    await waitFor(() => !isAlive(pid), { timeoutMs: 5000, what: 'Kafka to die' });
  }
  rmSync(pidFile, { force: true });
  return { stopped: true, pid };
}

/**
 * @returns {Promise<{ running: boolean, brokers: string, pid?: number, external: boolean,
 *   detail: string }>}
 */
export async function kafkaStatus() {
  const external = Boolean(process.env.KAFKA_BROKERS);
  const brokers = process.env.KAFKA_BROKERS || localBrokers();
  const pid = external ? undefined : findBrokerPid();
  try {
    await probeKafka(brokers);
    const owner = external ? 'external (KAFKA_BROKERS)' : pid ? `pid ${pid}` : 'not started by us';
    return { running: true, brokers, pid, external, detail: `up, ${owner}` };
  } catch (error) {
    const detail = pid ? `process ${pid} alive but not answering (${error.message})` : 'down';
    return { running: false, brokers, pid, external, detail };
  }
}

// Exported for tests of this module and for scripts that need the paths (e.g. to show logs).
export const kafkaPaths = { dataDir, libsDir, logFile: join(logsDir, 'server.log'), outFile };
