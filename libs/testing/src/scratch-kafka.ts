import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import {
  closeSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { pollUntil } from './poll-until';

const ROOT = join(__dirname, '..', '..', '..');

/** The broker jars `npm test` fetched (scripts/lib/kafka.mjs) for the shared test broker. */
function jarsDir(): string {
  const base = join(ROOT, '.cache', 'kafka');
  const versions = readdirSync(base).filter((name) => !name.startsWith('.'));
  if (versions.length === 0) throw new Error('no Kafka jars in .cache/kafka: run `npm test`');
  return join(base, versions.sort().at(-1)!, 'libs');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/**
 * A Kafka broker of one test's own (single KRaft node in a temporary folder), for tests that stop
 * and restart Kafka: the shared test broker must stay up for the other test files. The broker's
 * output goes to `broker.log` in its folder and is quoted when it fails to start.
 */
export class ScratchKafka {
  private child: ChildProcess | undefined;
  private readonly dir = mkdtempSync(join(tmpdir(), 'hookbase-kafka-'));
  private readonly logFile = join(this.dir, 'broker.log');
  private ports: { broker: number; controller: number } | undefined;

  /** `pickPort` finds a free loopback port; a test can replace it to force a port clash. */
  constructor(private readonly pickPort: () => Promise<number> = freePort) {}

  get brokers(): string {
    return `127.0.0.1:${this.ports!.broker}`;
  }

  /**
   * Starts the broker and waits until it answers. The first start picks free ports; if the broker
   * exits before answering (another process took a port between our probe and the JVM's bind), it
   * is formatted again on fresh ports, up to three times. A restart keeps its ports (clients hold
   * them), so there an early exit fails at once, quoting the broker's log.
   */
  async start(): Promise<void> {
    const firstStart = !this.ports;
    for (let attempt = 1; ; attempt += 1) {
      if (firstStart) await this.format();
      if ((await this.launch()) === 'answering') return;
      if (!firstStart || attempt >= 3) {
        throw new Error(
          `the scratch Kafka broker exited before answering (attempt ${attempt}); its log ends:\n${this.logTail()}`,
        );
      }
    }
  }

  /** Picks free ports, writes the configuration and formats empty storage for them. */
  private async format(): Promise<void> {
    this.ports = { broker: await this.pickPort(), controller: await this.pickPort() };
    const { broker, controller } = this.ports;
    const dataDir = join(this.dir, 'data');
    rmSync(dataDir, { recursive: true, force: true });
    const properties = join(this.dir, 'server.properties');
    writeFileSync(
      properties,
      [
        'process.roles=broker,controller',
        'node.id=1',
        `listeners=PLAINTEXT://127.0.0.1:${broker},CONTROLLER://127.0.0.1:${controller}`,
        `advertised.listeners=PLAINTEXT://127.0.0.1:${broker}`,
        'controller.listener.names=CONTROLLER',
        'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
        `controller.quorum.bootstrap.servers=127.0.0.1:${controller}`,
        `log.dirs=${dataDir}`,
        'offsets.topic.replication.factor=1',
        'transaction.state.log.replication.factor=1',
        'transaction.state.log.min.isr=1',
        'group.initial.rebalance.delay.ms=0',
        'auto.create.topics.enable=false',
      ].join('\n'),
    );
    const classpath = `${jarsDir()}/*`;
    const clusterId = execFileSync('java', [
      '-cp',
      classpath,
      'kafka.tools.StorageTool',
      'random-uuid',
    ])
      .toString()
      .trim()
      .split('\n')
      .at(-1)!;
    execFileSync('java', [
      '-cp',
      classpath,
      'kafka.tools.StorageTool',
      'format',
      '-t',
      clusterId,
      '-c',
      properties,
      '--standalone',
    ]);
  }

  /** Runs the broker until it answers a metadata request, or until it exits. */
  private async launch(): Promise<'answering' | 'exited'> {
    const log = openSync(this.logFile, 'a');
    const child = spawn(
      'java',
      ['-Xmx256m', '-cp', `${jarsDir()}/*`, 'kafka.Kafka', join(this.dir, 'server.properties')],
      { stdio: ['ignore', log, log] },
    );
    closeSync(log);
    this.child = child;
    const kafka = new Kafka({ brokers: [this.brokers], logLevel: logLevel.NOTHING });
    return pollUntil<'answering' | 'exited'>(
      async () => {
        if (child.exitCode !== null || child.signalCode !== null) return 'exited';
        const admin = kafka.admin();
        try {
          await admin.connect();
          await admin.listTopics();
          return 'answering';
        } finally {
          await admin.disconnect();
        }
      },
      {
        timeoutMs: 60_000,
        intervalMs: 250,
        description: `the scratch Kafka broker to answer (log: ${this.logFile})`,
      },
    );
  }

  /** The last lines the broker wrote (stdout and stderr). */
  logTail(): string {
    try {
      return readFileSync(this.logFile, 'utf8').split('\n').slice(-30).join('\n');
    } catch {
      return '(no log)';
    }
  }

  /** Stops the broker (its data stays for a restart). */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill('SIGTERM');
    });
  }

  async destroy(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
