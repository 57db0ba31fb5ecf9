import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { Client } from 'pg';
import { dropDatabase, HookbaseProcess } from '@hookbase/testing';
import { now } from './clock';
import { BenchOptions } from './options';
import { OtlpSink } from './otlp-sink';
import { serviceEntry } from './paths';
import { freeLoopbackPort } from './ports';
import { ServiceLogWatch } from './service-logs';

export interface ServiceHandle {
  name: string;
  pid: number | undefined;
}

/** The Hookbase a scenario drives: started by the bench (owned) or already running (attached). */
export interface BenchStack {
  ingestUrl: string;
  apiUrl: string;
  adminToken: string;
  topicPrefix: string;
  owned: boolean;
  topology: string;
  services: ServiceHandle[];
  logs: ServiceLogWatch;
  /** Whether a started service has exited (a crash during the run). */
  exited(): string[];
  recentLogs(lines?: number): string;
  /** What `GET /metrics` answered on the ingest URL once the stack was up (404: metrics off). */
  metricsStatus: number | null;
  /** With --tracing on: what the services exported to the OTLP sink so far; null when off. */
  traceExports(): { requests: number; bytes: number } | null;
  stop(): Promise<void>;
}

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

function benchKafka(brokers: string): Kafka {
  return new Kafka({
    clientId: 'hookbase-bench',
    brokers: brokers.split(','),
    logLevel: logLevel.NOTHING,
    retry: { retries: 5, initialRetryTime: 200 },
  });
}

async function waitForHealth(
  url: string,
  service: HookbaseProcess,
  child: ChildProcess,
  deadline: number,
) {
  for (;;) {
    try {
      const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) });
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null) {
      throw new Error(`Hookbase exited (${child.exitCode}) while starting:\n${service.logs(40)}`);
    }
    if (now() > deadline)
      throw new Error(`Hookbase did not answer ${url}/health in time:\n${service.logs(40)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Waits until the fan-out, dispatcher and DLQ consumer groups are Stable with a member: before
 * that, the first events would wait for a rebalance and the run would measure start-up instead
 * of Hookbase.
 */
async function waitForConsumerGroups(
  kafka: Kafka,
  prefix: string,
  deadline: number,
): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const groupIds = WORKER_GROUPS.map((role) => `${prefix}.${role}`);
    let last = '';
    for (;;) {
      try {
        const { groups } = await admin.describeGroups(groupIds);
        const pending = groups.filter((g) => g.state !== 'Stable' || g.members.length === 0);
        if (pending.length === 0) return;
        last = pending.map((g) => `${g.groupId}: ${g.state}`).join(', ');
      } catch (error) {
        last = (error as Error).message;
      }
      if (now() > deadline) throw new Error(`consumer groups not ready in time (${last})`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  } finally {
    await admin.disconnect();
  }
}

/** Removes a run's topics and consumer groups: a bench leaves the broker as it found it. */
export async function deleteKafkaState(
  brokers: string,
  topicPrefix: string,
  extraGroups: string[] = [],
) {
  const admin = benchKafka(brokers).admin();
  await admin.connect();
  try {
    const topics = (await admin.listTopics()).filter((topic) =>
      topic.startsWith(`${topicPrefix}.`),
    );
    const groups = [...WORKER_GROUPS.map((role) => `${topicPrefix}.${role}`), ...extraGroups];
    await admin.deleteGroups(groups).catch(() => undefined);
    if (topics.length > 0)
      await admin.deleteTopics({ topics, timeout: 15_000 }).catch(() => undefined);
  } finally {
    await admin.disconnect();
  }
}

/**
 * Starts Hookbase as `npm start` runs it (the built standalone process, or one process per
 * service with --topology split), on a database and topic prefix of its own so runs never share
 * state: a fresh database that the services migrate at boot, exactly as on first `npm start`.
 * (Not the integration tests' template database: `npm test` drops and rebuilds that template,
 * and a bench running beside a test run must not collide with it.)
 */

/**
 * The bench drives one API key (on plan free) at tens of thousands of events a second and makes
 * up to a thousand endpoints: far above the abuse limits' defaults, which it does not measure. It
 * raises them to their highest; `--env NAME=value` still sets any of them.
 */
export const BENCH_LIMITS: Record<string, string> = Object.fromEntries(
  ['FREE', 'PRO', 'BUSINESS'].flatMap((plan) => [
    [`HOOKBASE_INGEST_EVENTS_PER_SECOND_${plan}`, '10000000'],
    [`HOOKBASE_API_REQUESTS_PER_SECOND_${plan}`, '1000000'],
    [`HOOKBASE_MAX_ENDPOINTS_${plan}`, '10000000'],
  ]),
);

export async function startBenchStack(
  options: BenchOptions,
  log: (line: string) => void,
  scenarioDeadline: number,
): Promise<BenchStack> {
  const id = randomBytes(4).toString('hex');
  const database = `hookbase_bench_${id}`;
  const topicPrefix = `bench-${id}`;
  const adminToken = randomBytes(24).toString('hex');
  await onPostgres(options.databaseUrl, (client) => client.query(`CREATE DATABASE ${database}`));
  const logs = new ServiceLogWatch();
  const started: { name: string; process: HookbaseProcess; child: ChildProcess }[] = [];
  const kafka = benchKafka(options.brokers);
  const traces = options.tracing ? new OtlpSink() : undefined;
  let stopped = false;

  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await Promise.all(started.map((s) => s.process.stop(15_000)));
    if (traces) {
      await traces.stop();
      log(
        `traces: the OTLP sink took ${traces.stats.requests} exports (${traces.stats.bytes} bytes)`,
      );
    }
    await onPostgres(options.databaseUrl, (client) => dropDatabase(client, database)).catch(
      (error: Error) => log(`could not drop ${database}: ${error.message}`),
    );
    await deleteKafkaState(options.brokers, topicPrefix).catch((error: Error) =>
      log(`could not delete topics ${topicPrefix}.*: ${error.message}`),
    );
  };

  const tracingEnv: Record<string, string> = traces
    ? { OTEL_EXPORTER_OTLP_ENDPOINT: await traces.start() }
    : {};
  const baseEnv: Record<string, string> = {
    DATABASE_URL: withDatabase(options.databaseUrl, database),
    KAFKA_BROKERS: options.brokers,
    HOOKBASE_TOPIC_PREFIX: topicPrefix,
    HOOKBASE_ADMIN_TOKEN: adminToken,
    HOOKBASE_ALLOW_PRIVATE_TARGETS: 'true',
    HOOKBASE_RUN_MIGRATIONS: 'true',
    LOG_LEVEL: options.logLevel,
    // A free port: a running `npm start` or another bench stack may hold the default one.
    HOOKBASE_GRPC_PORT: '0',
    ...BENCH_LIMITS,
    ...tracingEnv,
    ...options.stackEnv,
  };
  const launch = (name: string, app: string, env: Record<string, string>) => {
    const child = spawn(process.execPath, ['--enable-source-maps', serviceEntry(app)], {
      env: { PATH: process.env.PATH ?? '', NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const service = new HookbaseProcess(child, env);
    // Whole lines, as the process wrote them (a JSON line may arrive in two chunks).
    service.follow((line) => logs.line(name, line));
    started.push({ name, process: service, child });
    return { service, child };
  };

  try {
    const deadline = Math.min(now() + 90_000, scenarioDeadline);
    let ingestUrl: string;
    let apiUrl: string;
    if (options.topology === 'standalone') {
      const port = await freeLoopbackPort();
      const { service, child } = launch('standalone', 'standalone', {
        ...baseEnv,
        PORT: String(port),
      });
      ingestUrl = apiUrl = `http://127.0.0.1:${port}`;
      await waitForHealth(ingestUrl, service, child, deadline);
    } else {
      const [ingestPort, apiPort] = [await freeLoopbackPort(), await freeLoopbackPort()];
      const ingest = launch('ingest', 'ingest', { ...baseEnv, PORT: String(ingestPort) });
      const api = launch('api', 'api', { ...baseEnv, PORT: String(apiPort) });
      for (const app of WORKER_GROUPS) launch(app, app, baseEnv);
      ingestUrl = `http://127.0.0.1:${ingestPort}`;
      apiUrl = `http://127.0.0.1:${apiPort}`;
      await waitForHealth(ingestUrl, ingest.service, ingest.child, deadline);
      await waitForHealth(apiUrl, api.service, api.child, deadline);
    }
    await waitForConsumerGroups(kafka, topicPrefix, deadline);
    const metricsStatus = await fetch(`${ingestUrl}/metrics`).then(
      (response) => response.status,
      () => null,
    );
    return {
      ingestUrl,
      apiUrl,
      adminToken,
      topicPrefix,
      owned: true,
      topology: options.topology,
      services: started.map((s) => ({ name: s.name, pid: s.child.pid })),
      logs,
      exited: () =>
        started
          .filter((s) => s.child.exitCode !== null || s.child.signalCode !== null)
          .map((s) => `${s.name} (${s.child.exitCode ?? s.child.signalCode})`),
      recentLogs: (lines = 30) =>
        started.map((s) => `--- ${s.name}\n${s.process.logs(lines)}`).join('\n'),
      metricsStatus,
      traceExports: () => (traces ? { ...traces.stats } : null),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** A Hookbase that is already running (`npm start`): nothing is started, and nothing stopped. */
export function attachedStack(attach: NonNullable<BenchOptions['attach']>): BenchStack {
  return {
    ingestUrl: attach.url,
    apiUrl: attach.url,
    adminToken: attach.adminToken,
    topicPrefix: attach.topicPrefix,
    owned: false,
    topology: 'running (attached)',
    services: attach.pid ? [{ name: 'hookbase (running)', pid: attach.pid }] : [],
    logs: new ServiceLogWatch(),
    exited: () => [],
    recentLogs: () => '(attached: the running process’s logs are where it was started)',
    metricsStatus: null,
    traceExports: () => null,
    stop: async () => undefined,
  };
}
