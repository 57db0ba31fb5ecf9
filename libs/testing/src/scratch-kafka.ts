import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
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
 * and restart Kafka: the shared test broker must stay up for the other test files.
 */
export class ScratchKafka {
  private child: ChildProcess | undefined;
  private readonly dir = mkdtempSync(join(tmpdir(), 'hookbase-kafka-'));
  private ports: { broker: number; controller: number } | undefined;

  get brokers(): string {
    return `127.0.0.1:${this.ports!.broker}`;
  }

  async start(): Promise<void> {
    const classpath = `${jarsDir()}/*`;
    if (!this.ports) {
      this.ports = { broker: await freePort(), controller: await freePort() };
      const { broker, controller } = this.ports;
      writeFileSync(
        join(this.dir, 'server.properties'),
        [
          'process.roles=broker,controller',
          'node.id=1',
          `listeners=PLAINTEXT://127.0.0.1:${broker},CONTROLLER://127.0.0.1:${controller}`,
          `advertised.listeners=PLAINTEXT://127.0.0.1:${broker}`,
          'controller.listener.names=CONTROLLER',
          'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
          `controller.quorum.bootstrap.servers=127.0.0.1:${controller}`,
          `log.dirs=${join(this.dir, 'data')}`,
          'offsets.topic.replication.factor=1',
          'transaction.state.log.replication.factor=1',
          'transaction.state.log.min.isr=1',
          'group.initial.rebalance.delay.ms=0',
          'auto.create.topics.enable=false',
        ].join('\n'),
      );
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
        join(this.dir, 'server.properties'),
        '--standalone',
      ]);
    }
    this.child = spawn(
      'java',
      ['-Xmx256m', '-cp', classpath, 'kafka.Kafka', join(this.dir, 'server.properties')],
      { stdio: 'ignore' },
    );
    const kafka = new Kafka({ brokers: [this.brokers], logLevel: logLevel.NOTHING });
    await pollUntil(
      async () => {
        const admin = kafka.admin();
        try {
          await admin.connect();
          await admin.listTopics();
          return true;
        } finally {
          await admin.disconnect();
        }
      },
      { timeoutMs: 60_000, intervalMs: 250, description: 'the scratch Kafka broker to answer' },
    );
  }

  /** Stops the broker (its data stays for a restart). */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
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
