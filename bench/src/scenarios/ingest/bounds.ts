import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Kafka, logLevel, Message, Partitioners } from 'kafkajs';
import { Cleanup } from '../../core/cleanup';
import { now } from '../../core/clock';
import { ROOT } from '../../core/paths';
import { distribution } from '../../core/stats';
import { benchEnvelope } from '../../drivers/envelope';
import { EventPublisher } from '../../drivers/ingest-clients';
import { BenchEvent, benchPayload, EVENT_TYPE, runClosedLoop } from '../../drivers/publisher';

/**
 * The two physical bounds every ingest scenario reports its accepted rate against, measured in
 * the same run on the same machine: the raw Kafka produce rate (what kafkajs, configured as
 * Hookbase's producer, writes to the broker) and the bare HTTP rate (what a server that does
 * nothing but answer ingest's requests serves to the same clients).
 */

// ── raw Kafka produce ────────────────────────────────────────────────────────────────────────

/** An installed package's version, read from its package.json ('unknown' when it cannot be). */
export function packageVersion(name: string): string {
  try {
    const file = join(ROOT, 'node_modules', name, 'package.json');
    return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

export interface RawProduceOptions {
  brokers: string;
  /** The scratch topic's partitions: those of `<prefix>.events`. */
  partitions: number;
  /** Record keys, taken in turn: the organizations the scenario publishes for. */
  keys: readonly string[];
  payloadBytes: number;
  records: number;
  /** Records per send; one send in flight. */
  batch: number;
  deadlineMs: number;
}

export interface RawProduceResult {
  client: string;
  topic: string;
  partitions: number;
  keys: number;
  /** Mean record value size, bytes (an event envelope of the scenario's payload size). */
  recordBytes: number;
  batch: number;
  records: number;
  seconds: number;
  perSecond: number;
  mbPerSecond: number;
  stoppedByDeadline: boolean;
}

/**
 * One batch of records shaped like what Hookbase writes to `<prefix>.events` for this run: an
 * envelope of the same payload size, keyed by organization id. Built once and sent again and
 * again, so the measurement is of Kafka and the client, not of the bench building records.
 */
export function rawBatch(keys: readonly string[], payloadBytes: number, size: number): Message[] {
  if (keys.length === 0) throw new Error('raw produce needs at least one key');
  return Array.from({ length: size }, (_, i) => {
    const record = benchEnvelope(keys[i % keys.length], i, payloadBytes);
    return { key: record.key, value: record.value };
  });
}

/**
 * The physical bound beside each ingest figure, measured in the same run on the same broker:
 * kafkajs (the client Hookbase produces with) configured as Hookbase's producer (idempotent,
 * acks=all, one request in flight, murmur2 partitioner, no compression) sending `records`
 * envelope-sized records, `batch` per send, to a scratch topic of its own that is deleted
 * afterwards. Keys and record size are the scenario's.
 */
export async function measureRawProduce(
  options: RawProduceOptions,
  cleanup: Cleanup,
  onAcked: (records: number) => void = () => undefined,
): Promise<RawProduceResult> {
  const topic = `hookbase-bench-raw-${randomBytes(4).toString('hex')}`;
  const kafka = new Kafka({
    clientId: 'hookbase-bench-raw',
    brokers: options.brokers.split(','),
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    createPartitioner: Partitioners.DefaultPartitioner,
    allowAutoTopicCreation: false,
  });
  const removeTopic = async () => {
    await producer.disconnect().catch(() => undefined);
    await admin.deleteTopics({ topics: [topic], timeout: 15_000 }).catch(() => undefined);
    await admin.disconnect().catch(() => undefined);
  };
  const undo = cleanup.add(`raw produce topic ${topic}`, removeTopic);
  try {
    await admin.connect();
    await admin.createTopics({
      waitForLeaders: true,
      topics: [{ topic, numPartitions: options.partitions, replicationFactor: -1 }],
    });
    await producer.connect();
    const messages = rawBatch(options.keys, options.payloadBytes, options.batch);
    const recordBytes =
      messages.reduce((sum, m) => sum + Buffer.byteLength(m.value as string), 0) / messages.length;
    // One small send first: connection and producer-id set-up are not throughput.
    await producer.send({ topic, acks: -1, messages: messages.slice(0, 1) });
    let sent = 0;
    let stoppedByDeadline = false;
    const startMs = now();
    while (sent < options.records) {
      if (now() > options.deadlineMs) {
        stoppedByDeadline = true;
        break;
      }
      const size = Math.min(options.batch, options.records - sent);
      await producer.send({
        topic,
        acks: -1,
        messages: size === messages.length ? messages : messages.slice(0, size),
      });
      sent += size;
      onAcked(sent);
    }
    const seconds = (now() - startMs) / 1000;
    return {
      client: `kafkajs ${packageVersion('kafkajs')}`,
      topic,
      partitions: options.partitions,
      keys: options.keys.length,
      recordBytes,
      batch: options.batch,
      records: sent,
      seconds,
      perSecond: seconds > 0 ? sent / seconds : 0,
      mbPerSecond: seconds > 0 ? (sent * recordBytes) / 1e6 / seconds : 0,
      stoppedByDeadline,
    };
  } finally {
    undo();
    await removeTopic();
  }
}

// ── bare HTTP ────────────────────────────────────────────────────────────────────────────────

/**
 * The bare HTTP bound: what an HTTP server on this machine answers when it does nothing but what
 * every ingest server must (read the body, parse its JSON, answer with an id per event), driven
 * by the same client, at the same concurrency and events per request, while Hookbase is idle.
 * It runs in a process of its own, as Hookbase does, so the load generator and the server share
 * the machine's cores as they do in the step. Like the raw Kafka produce figure, it is a ceiling:
 * Hookbase does this and also validates, produces to Kafka (acks=all) and fans out.
 *
 * node:http, not Fastify: the plainest server Node has, so the figure is the machine's, not a
 * framework's. It answers `POST /v1/events` with 202 and `POST /v1/events/batch` with 207, in
 * the shapes the bench's clients read, and stops when its stdin closes.
 */
const BARE_INGEST_SERVER = `
const http = require('node:http');
let next = 0;
const id = () => 'evt_' + String(next++).padStart(26, '0');
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    let status = 400;
    let body = { error: { code: 'VALIDATION_FAILED', message: 'not an event' } };
    try {
      const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const acceptedAt = new Date().toISOString();
      const one = (event) => ({ id: id(), eventType: event.eventType, acceptedAt, duplicate: false });
      if (req.url === '/v1/events') {
        status = 202;
        body = { data: one(parsed) };
      } else if (req.url === '/v1/events/batch' && Array.isArray(parsed.events)) {
        status = 207;
        body = { data: parsed.events.map((event) => ({ status: 202, data: one(event) })) };
      }
    } catch {}
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  });
});
server.keepAliveTimeout = 30000;
server.listen(0, '127.0.0.1', () => process.stdout.write(JSON.stringify({ port: server.address().port }) + '\\n'));
process.stdin.on('end', () => { server.closeAllConnections(); server.close(() => process.exit(0)); });
process.stdin.resume();
`;

export interface BareServer {
  url: string;
  stop(): Promise<void>;
}

/** Starts the bare server in a child process; resolves once it listens. */
export function startBareIngestServer(timeoutMs = 10_000): Promise<BareServer> {
  const child = spawn(process.execPath, ['-e', BARE_INGEST_SERVER], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    child.stdin.end();
    const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(killer);
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the bare HTTP server did not start within ${timeoutMs} ms`));
    }, timeoutMs);
    let pending = '';
    child.stdout.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      const line = pending.split('\n')[0];
      if (pending.includes('\n')) {
        clearTimeout(timer);
        const { port } = JSON.parse(line) as { port: number };
        resolve({ url: `http://127.0.0.1:${port}`, stop });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the bare HTTP server exited (${code}) before it listened`));
    });
  });
}

export interface BoundRun {
  /** Events answered 202 (alone or inside a 207) per second. */
  perSecond: number;
  requests: number;
  p99Ms: number | null;
  /** Events the server did not answer as accepted: must be 0 for the figure to stand. */
  unanswered: number;
}

/**
 * Drives `publisher` in a closed loop (as a step does) for `seconds` and counts the events
 * answered as accepted.
 */
export async function measureBound(options: {
  publisher: EventPublisher;
  concurrency: number;
  eventsPerRequest: number;
  payloadBytes: number;
  seconds: number;
}): Promise<BoundRun> {
  let accepted = 0;
  let unanswered = 0;
  let seq = 0;
  const latencies: number[] = [];
  const startMs = now();
  await runClosedLoop({
    workers: options.concurrency,
    untilMs: startMs + options.seconds * 1000,
    send: async () => {
      const events: BenchEvent[] = Array.from({ length: options.eventsPerRequest }, () => ({
        eventType: EVENT_TYPE,
        payload: benchPayload(seq++, options.payloadBytes),
      }));
      const sentAt = now();
      const outcomes = await options.publisher.publish(events);
      latencies.push(now() - sentAt);
      for (const outcome of outcomes) {
        if (outcome.kind === 'accepted') accepted++;
        else unanswered++;
      }
    },
  });
  const elapsedSeconds = (now() - startMs) / 1000;
  return {
    perSecond: elapsedSeconds > 0 ? accepted / elapsedSeconds : 0,
    requests: latencies.length,
    p99Ms: distribution(latencies)?.p99 ?? null,
    unanswered,
  };
}
