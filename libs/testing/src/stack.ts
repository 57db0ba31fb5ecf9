import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { createTestDatabase } from './test-database';

const ROOT = join(__dirname, '..', '..', '..');

export interface TestEnvironment {
  databaseUrl: string;
  kafkaBrokers: string;
}

/** What scripts/test.mjs hands to the test processes: the infrastructure it started. */
export function testEnvironment(): TestEnvironment {
  const databaseUrl = process.env.HOOKBASE_TEST_DATABASE_URL;
  const kafkaBrokers = process.env.HOOKBASE_TEST_KAFKA_BROKERS;
  if (!databaseUrl || !kafkaBrokers) {
    // Never skip: a missing service is a failure, with what to do about it.
    throw new Error(
      'Integration tests need PostgreSQL and Kafka: run them with `npm test` (it starts both).',
    );
  }
  return { databaseUrl, kafkaBrokers };
}

/** One Hookbase process (built from dist/) with its own database and topic prefix. */
export class HookbaseProcess {
  private output: string[] = [];
  private readonly followers: ((line: string) => void)[] = [];
  private dropped = 0;
  private exited: Promise<number | null>;

  constructor(
    private readonly child: ChildProcess,
    readonly env: Record<string, string>,
  ) {
    // Whole lines only: a chunk may end in the middle of one, kept until its end arrives.
    const collector = () => {
      let partial = '';
      return (chunk: Buffer) => {
        const parts = (partial + chunk.toString('utf8')).split('\n');
        partial = parts.pop() ?? '';
        for (const line of parts.filter(Boolean)) this.add(line);
      };
    };
    child.stdout?.on('data', collector());
    child.stderr?.on('data', collector());
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  private add(line: string): void {
    this.output.push(line);
    if (this.output.length > 2000) {
      this.dropped += this.output.length - 2000;
      this.output.splice(0, this.output.length - 2000);
    }
    for (const follow of this.followers) follow(line);
  }

  /**
   * Hands every line the process wrote to `follow`: those kept so far (the last 2,000), then each
   * new one as it comes. Answers how many earlier lines were no longer kept (0: it saw them all).
   */
  follow(follow: (line: string) => void): { missed: number } {
    for (const line of this.output) follow(line);
    this.followers.push(follow);
    return { missed: this.dropped };
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  logs(lines = 80): string {
    return this.output.slice(-lines).join('\n');
  }

  /** Waits for a line whose message (the `message` of a JSON line, else the line) matches. */
  async waitForLine(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (const line of this.output) {
        const match = pattern.exec(logMessage(line));
        if (match) return match;
      }
      if (this.child.exitCode !== null) {
        throw new Error(
          `process exited (${this.child.exitCode}) before ${pattern}:\n${this.logs()}`,
        );
      }
      if (Date.now() > deadline)
        throw new Error(`no ${pattern} within ${timeoutMs} ms:\n${this.logs()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /**
   * Stops gracefully (SIGTERM), or kills when it does not stop in time; answers the exit code
   * (null when a signal ended it, or when it had already ended).
   */
  async stop(timeoutMs = 15_000): Promise<number | null> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return null;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
    const code = await this.exited;
    clearTimeout(timer);
    return code;
  }

  async kill(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }
}

/** The message of a log line: the `message` field of a JSON line, or the whole line. */
export function logMessage(line: string): string {
  if (!line.startsWith('{')) return line;
  try {
    const parsed: unknown = JSON.parse(line);
    if (typeof parsed === 'object' && parsed !== null && 'message' in parsed) {
      return String(parsed.message);
    }
  } catch {
    // Not JSON after all: the line as written.
  }
  return line;
}

export interface RunningStack {
  url: string;
  adminToken: string;
  topicPrefix: string;
  databaseUrl: string;
  process: HookbaseProcess;
  /** Starts another process on the same database and topics (same env, its own port). */
  startAnother(
    overrides?: Record<string, string>,
  ): Promise<{ process: HookbaseProcess; url: string }>;
  stop(): Promise<void>;
}

export async function spawnHookbase(
  app: 'standalone' | 'ingest' | 'fanout' | 'dispatcher' | 'dlq-handler' | 'api' | 'migrate',
  env: Record<string, string>,
): Promise<{ process: HookbaseProcess; url?: string }> {
  const entry = join(ROOT, 'dist', 'apps', app, 'src', 'main.js');
  // HOOKBASE_TEST_KAFKA_PRODUCER and HOOKBASE_TEST_KAFKA_CONSUMER run any test's processes with
  // another Kafka client (`HOOKBASE_TEST_KAFKA_PRODUCER=kafkajs npm test -- <files>`); a test's
  // own setting wins.
  const producer = process.env.HOOKBASE_TEST_KAFKA_PRODUCER;
  const consumer = process.env.HOOKBASE_TEST_KAFKA_CONSUMER;
  const child = spawn(process.execPath, [entry], {
    env: {
      PATH: process.env.PATH ?? '',
      NO_COLOR: '1',
      ...(producer ? { HOOKBASE_KAFKA_PRODUCER: producer } : {}),
      ...(consumer ? { HOOKBASE_KAFKA_CONSUMER: consumer } : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const hookbase = new HookbaseProcess(child, env);
  if (app === 'standalone' || app === 'ingest' || app === 'api') {
    const [, url] = await hookbase.waitForLine(/listening on (http:\/\/\S+)/, 60_000);
    return { process: hookbase, url };
  }
  await hookbase.waitForLine(/\bstarted\b/, 60_000);
  return { process: hookbase };
}

/**
 * Deletes the topics under a test's prefix, so that runs after runs do not pile up partitions on
 * the developer's broker (a full run creates about 200 topics). Best effort, and bounded: the
 * broker may be down when a test of an outage ends.
 */
export async function deleteTopicsUnder(brokers: string, prefix: string): Promise<string[]> {
  const kafka = new Kafka({
    clientId: 'hookbase-test-cleanup',
    brokers: brokers.split(','),
    logLevel: logLevel.NOTHING,
    connectionTimeout: 2_000,
    retry: { retries: 1 },
  });
  const admin = kafka.admin();
  try {
    await admin.connect();
    const topics = (await admin.listTopics()).filter((topic) => topic.startsWith(`${prefix}.`));
    if (topics.length > 0) await admin.deleteTopics({ topics, timeout: 10_000 });
    return topics;
  } catch {
    return [];
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/**
 * Starts Hookbase as users run it (the standalone process), against a fresh database cloned from
 * the migrated template and topics under a prefix of its own, so test files never share state.
 */
export async function startStack(
  overrides: Record<string, string> = {},
  options: { viaDatabaseUrl?: (url: string) => string } = {},
): Promise<RunningStack> {
  const { databaseUrl, kafkaBrokers } = testEnvironment();
  const database = await createTestDatabase(databaseUrl);
  const adminToken = randomBytes(24).toString('hex');
  const topicPrefix = `test-${randomBytes(4).toString('hex')}`;
  const env: Record<string, string> = {
    // A test may route the services' connections through a proxy it controls.
    DATABASE_URL: options.viaDatabaseUrl ? options.viaDatabaseUrl(database.url) : database.url,
    KAFKA_BROKERS: kafkaBrokers,
    HOOKBASE_TOPIC_PREFIX: topicPrefix,
    HOOKBASE_ADMIN_TOKEN: adminToken,
    // As `npm start` does: signing secrets sealed at rest, poll cursors signed with a derived key.
    HOOKBASE_CREDENTIALS_KEY: randomBytes(32).toString('base64'),
    HOOKBASE_ALLOW_PRIVATE_TARGETS: 'true',
    HOOKBASE_RUN_MIGRATIONS: 'true',
    PORT: '0',
    // Any free port, so stacks running side by side do not contend for 50051.
    HOOKBASE_GRPC_PORT: '0',
    LOG_LEVEL: 'info',
    ...overrides,
  };
  const processes: HookbaseProcess[] = [];
  const first = await spawnHookbase('standalone', env);
  processes.push(first.process);
  return {
    url: first.url!,
    adminToken,
    topicPrefix,
    databaseUrl: database.url,
    process: first.process,
    async startAnother(more = {}) {
      const next = await spawnHookbase('standalone', { ...env, ...more });
      processes.push(next.process);
      return { process: next.process, url: next.url! };
    },
    async stop() {
      await Promise.all(processes.map((p) => p.stop()));
      await database.drop();
      await deleteTopicsUnder(kafkaBrokers, topicPrefix);
    },
  };
}
