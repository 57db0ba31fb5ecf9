import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { Client } from 'pg';
import { dropDatabase, HookbaseProcess, pollUntil } from '@hookbase/testing';
import { freeLoopbackPort, now, serviceEntry, sleep } from './util';
import { BenchOptions } from './options';
import { inMemoryCgroup, makeMemoryCgroup, MemoryCgroup } from './memory-cgroup';
import { ServiceLogWatch } from './service-logs';

export interface ServiceHandle {
  name: string;
  pid: number | undefined;
}

/** The Hookbase a scenario drives, started by the bench on a database and topics of its own. */
export type BenchStack = Awaited<ReturnType<typeof startBenchStack>>;

const WORKER_GROUPS = ['fanout', 'dispatcher', 'dlq-handler'] as const;

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function onPostgres<T>(url: string, run: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: withDatabase(url, 'postgres') });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

const benchKafka = (brokers: string) =>
  new Kafka({
    clientId: 'hookbase-bench',
    brokers: brokers.split(','),
    logLevel: logLevel.NOTHING,
    retry: { retries: 5, initialRetryTime: 200 },
  });

async function waitForHealth(
  url: string,
  service: HookbaseProcess,
  child: ChildProcess,
  deadline: number,
) {
  for (;;) {
    const ok = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) }).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) return;
    if (child.exitCode !== null)
      throw new Error(`Hookbase exited (${child.exitCode}) while starting:\n${service.logs(40)}`);
    if (now() > deadline)
      throw new Error(`Hookbase did not answer ${url}/health in time:\n${service.logs(40)}`);
    await sleep(100);
  }
}

/**
 * Waits until the worker consumer groups are Stable with a member: before that, the first events
 * would wait for a rebalance and the run would measure start-up instead of Hookbase.
 */
async function waitForConsumerGroups(kafka: Kafka, prefix: string, deadline: number) {
  const admin = kafka.admin();
  await admin.connect();
  const groupIds = WORKER_GROUPS.map((role) => `${prefix}.${role}`);
  const ready = async () =>
    (await admin.describeGroups(groupIds)).groups.every(
      (g) => g.state === 'Stable' && g.members.length > 0,
    );
  const description = `consumer groups ${groupIds.join(', ')} Stable with a member`;
  await pollUntil(ready, {
    timeoutMs: Math.max(0, deadline - now()),
    intervalMs: 250,
    description,
  }).finally(() => admin.disconnect());
}

/** Removes a run's topics and consumer groups: a bench leaves the broker as it found it. */
export async function deleteKafkaState(brokers: string, topicPrefix: string) {
  const admin = benchKafka(brokers).admin();
  await admin.connect();
  try {
    const topics = (await admin.listTopics()).filter((t) => t.startsWith(`${topicPrefix}.`));
    await admin
      .deleteGroups(WORKER_GROUPS.map((role) => `${topicPrefix}.${role}`))
      .catch(() => undefined);
    if (topics.length > 0)
      await admin.deleteTopics({ topics, timeout: 15_000 }).catch(() => undefined);
  } finally {
    await admin.disconnect();
  }
}

/**
 * The bench drives one API key (plan free) at tens of thousands of events a second and makes up
 * to a thousand endpoints: far above the abuse limits' defaults, which it does not measure. It
 * raises them to their highest; `--stack-env` still sets any of them.
 */
export const BENCH_LIMITS: Record<string, string> = Object.fromEntries(
  ['FREE', 'PRO', 'BUSINESS'].flatMap((plan) => [
    [`HOOKBASE_INGEST_EVENTS_PER_SECOND_${plan}`, '10000000'],
    [`HOOKBASE_API_REQUESTS_PER_SECOND_${plan}`, '1000000'],
    [`HOOKBASE_MAX_ENDPOINTS_${plan}`, '10000000'],
  ]),
);

/**
 * Starts Hookbase as `npm start` runs it (the built standalone process, or one process per
 * service with --topology split) on a fresh database, which the services migrate at boot as on a
 * first `npm start` (not the integration tests' template, which `npm test` drops and rebuilds),
 * and a topic prefix of its own. `stop` stops it and drops both.
 */
export async function startBenchStack(
  options: BenchOptions,
  log: (line: string) => void,
  scenarioDeadline: number,
) {
  const id = randomBytes(4).toString('hex');
  const database = `hookbase_bench_${id}`;
  const topicPrefix = `bench-${id}`;
  const adminToken = randomBytes(24).toString('hex');
  await onPostgres(options.databaseUrl, (client) => client.query(`CREATE DATABASE ${database}`));
  const logs = new ServiceLogWatch();
  const started: { name: string; process: HookbaseProcess; child: ChildProcess }[] = [];
  const groups: MemoryCgroup[] = [];
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await Promise.all(started.map((s) => s.process.stop(15_000)));
    for (const group of groups) group.remove();
    await onPostgres(options.databaseUrl, (client) => dropDatabase(client, database)).catch(
      (error: Error) => log(`could not drop ${database}: ${error.message}`),
    );
    await deleteKafkaState(options.brokers, topicPrefix).catch((error: Error) =>
      log(`could not delete topics ${topicPrefix}.*: ${error.message}`),
    );
  };
  const baseEnv: Record<string, string> = {
    DATABASE_URL: withDatabase(options.databaseUrl, database),
    KAFKA_BROKERS: options.brokers,
    HOOKBASE_TOPIC_PREFIX: topicPrefix,
    HOOKBASE_ADMIN_TOKEN: adminToken,
    // As `npm start` and production run: signing secrets sealed, opened by the dispatcher.
    HOOKBASE_CREDENTIALS_KEY: randomBytes(32).toString('base64'),
    HOOKBASE_ALLOW_PRIVATE_TARGETS: 'true',
    HOOKBASE_RUN_MIGRATIONS: 'true',
    LOG_LEVEL: options.logLevel,
    // A free port: a running `npm start` or another bench stack may hold the default one.
    HOOKBASE_GRPC_PORT: '0',
    ...BENCH_LIMITS,
    ...options.stackEnv,
  };
  const launch = async (name: string, port?: number) => {
    const env = port === undefined ? baseEnv : { ...baseEnv, PORT: String(port) };
    // As in a container with a memory limit: Node.js sizes its heap from the group's limit.
    let start = { command: process.execPath, args: [serviceEntry(name)] };
    if (options.memoryLimitMiB !== null) {
      const group = makeMemoryCgroup(`hookbase-bench-${id}-${name}`, options.memoryLimitMiB);
      groups.push(group);
      start = inMemoryCgroup(group.procs, start.command, start.args);
    }
    const child = spawn(start.command, start.args, {
      env: { PATH: process.env.PATH ?? '', NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const service = new HookbaseProcess(child, env);
    service.follow((line) => logs.line(name, line));
    started.push({ name, process: service, child });
    const url = `http://127.0.0.1:${port}`;
    return { url, healthy: (deadline: number) => waitForHealth(url, service, child, deadline) };
  };

  try {
    const deadline = Math.min(now() + 90_000, scenarioDeadline);
    let ingest;
    let api;
    if (options.topology === 'standalone')
      ingest = api = await launch('standalone', await freeLoopbackPort());
    else {
      ingest = await launch('ingest', await freeLoopbackPort());
      api = await launch('api', await freeLoopbackPort());
      for (const app of WORKER_GROUPS) await launch(app);
    }
    await ingest.healthy(deadline);
    if (api !== ingest) await api.healthy(deadline);
    await waitForConsumerGroups(benchKafka(options.brokers), topicPrefix, deadline);
    return {
      ingestUrl: ingest.url,
      apiUrl: api.url,
      adminToken,
      topicPrefix,
      /** The run's own database (the stage times the latency breakdown reads). */
      databaseUrl: baseEnv.DATABASE_URL,
      topology: options.topology,
      services: started.map((s): ServiceHandle => ({ name: s.name, pid: s.child.pid })),
      logs,
      /** The services that have exited (a crash during the run). */
      exited: () =>
        started
          .filter((s) => s.child.exitCode !== null || s.child.signalCode !== null)
          .map((s) => `${s.name} (${s.child.exitCode ?? s.child.signalCode})`),
      recentLogs: (lines = 30) =>
        started.map((s) => `--- ${s.name}\n${s.process.logs(lines)}`).join('\n'),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
