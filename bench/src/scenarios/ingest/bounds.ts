import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Kafka, logLevel, Message, Partitioners } from 'kafkajs';
import { Cleanup } from '../../core/cleanup';
import { now } from '../../core/clock';
import { ROOT } from '../../core/paths';
import { benchEnvelope } from '../../drivers/envelope';

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
