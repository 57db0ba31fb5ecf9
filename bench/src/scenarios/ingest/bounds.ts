import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { loadConfig } from '@hookbase/config';
import {
  createPlatformaticProducer,
  KafkajsProducerClient,
  PlatformaticProducerClient,
  ProducedRecord,
  ProducerClient,
} from '@hookbase/kafka';
import { fmtInt, fmtRate, fmtRatio } from '../../core/report';
import { BenchSession } from '../../core/session';
import { now } from '../../core/util';
import { benchEnvelope, hookbaseLikeProducer } from '../../drivers/envelope';

/** The raw Kafka produce bound every ingest scenario measures first, in the same run. */
export type RawProduceResult = Awaited<ReturnType<typeof rawBaseline>>;

/** The version of an installed package, read from its package.json beside its entry point. */
function versionOf(name: string, packageJson: string): string {
  return (JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string }).version ?? name;
}

/**
 * The producer client Hookbase's processes use in this run (`HOOKBASE_KAFKA_PRODUCER` as
 * `--stack-env` gives it, else Hookbase's default), through Hookbase's own adapter: the raw bound
 * is then that of the client the accepted events went through.
 */
export function rawProducerKind(stackEnv: Record<string, string>): 'kafkajs' | 'platformatic' {
  return loadConfig({ HOOKBASE_KAFKA_PRODUCER: stackEnv.HOOKBASE_KAFKA_PRODUCER }).kafka.producer;
}

function rawProducer(
  kind: 'kafkajs' | 'platformatic',
  brokers: string,
  clientId: string,
): { client: ProducerClient; label: string } {
  if (kind === 'kafkajs') {
    const { kafka } = hookbaseLikeProducer(brokers, clientId);
    const version = versionOf('kafkajs', require.resolve('kafkajs/package.json'));
    return { client: new KafkajsProducerClient(kafka), label: `kafkajs ${version}` };
  }
  // The package exports only its entry point (dist/index.js); its package.json is one level up.
  const entry = require.resolve('@platformatic/kafka');
  const version = versionOf('@platformatic/kafka', join(dirname(entry), '..', 'package.json'));
  const settings = { clientId, brokers: brokers.split(',') };
  return {
    client: new PlatformaticProducerClient((topic) => createPlatformaticProducer(settings, topic)),
    label: `@platformatic/kafka ${version}`,
  };
}

/** The raw bound stops here at the latest, whatever --records asks. */
const RAW_SECONDS = 10;

/**
 * One batch of records shaped like what Hookbase writes to `<prefix>.events` for this run (an
 * envelope of the same payload size, keyed by organization id), built once and sent again and
 * again, so the measurement is of Kafka and the client, not of the bench building records.
 */
export function rawBatch(
  keys: readonly string[],
  payloadBytes: number,
  size: number,
): ProducedRecord[] {
  if (keys.length === 0) throw new Error('raw produce needs at least one key');
  return Array.from({ length: size }, (_, i) => {
    const record = benchEnvelope(keys[i % keys.length], i, payloadBytes);
    return { key: record.key, value: record.value };
  });
}

/**
 * The client Hookbase produces with in this run, through Hookbase's own adapter (idempotent,
 * acks=all, one send at a time per topic, murmur2 partitioner, no compression), sends --records
 * envelope-sized records, --batch per send, keyed as the scenario's events, to a scratch topic
 * with as many partitions as `<prefix>.events`, deleted afterwards. Runs while Hookbase is idle.
 */
export async function rawBaseline(session: BenchSession, keys: readonly string[]) {
  const { options, cleanup, progress, deadlineMs } = session.ctx;
  const partitions = await session.kafka.partitionCount(`${session.stack.topicPrefix}.events`);
  const topic = `hookbase-bench-raw-${randomBytes(4).toString('hex')}`;
  const { kafka } = hookbaseLikeProducer(options.brokers, 'hookbase-bench-raw-admin');
  const kind = rawProducerKind(options.stackEnv);
  const { client, label } = rawProducer(kind, options.brokers, 'hookbase-bench-raw');
  const admin = kafka.admin();
  const removeTopic = async () => {
    await client.close().catch(() => undefined);
    await admin.deleteTopics({ topics: [topic], timeout: 15_000 }).catch(() => undefined);
    await admin.disconnect().catch(() => undefined);
  };
  const undo = cleanup.add(`raw produce topic ${topic}`, removeTopic);
  let sent = 0;
  session.setPhase(
    `raw ${label} produce`,
    () => `${fmtInt(sent)} records acknowledged`,
    () => sent / options.records,
  );
  try {
    await admin.connect();
    await admin.createTopics({
      waitForLeaders: true,
      topics: [{ topic, numPartitions: partitions, replicationFactor: -1 }],
    });
    const messages = rawBatch(keys, options.payloadBytes, options.batch);
    const bytes = messages.reduce((sum, m) => sum + Buffer.byteLength(m.value as string), 0);
    const recordBytes = bytes / messages.length;
    // One small send first: connection and producer-id set-up are not throughput.
    await client.send(topic, messages.slice(0, 1));
    const untilMs = Math.min(deadlineMs, now() + RAW_SECONDS * 1000);
    const startMs = now();
    while (sent < options.records && now() <= untilMs) {
      const size = Math.min(options.batch, options.records - sent);
      await client.send(topic, messages.slice(0, size));
      sent += size;
    }
    const seconds = (now() - startMs) / 1000;
    const raw = {
      client: label,
      partitions,
      keys: keys.length,
      recordBytes,
      batch: options.batch,
      records: sent,
      seconds,
      perSecond: seconds > 0 ? sent / seconds : 0,
      mbPerSecond: seconds > 0 ? (sent * recordBytes) / 1e6 / seconds : 0,
      stoppedByDeadline: sent < options.records,
    };
    progress.note(
      `  raw ${label} produce: ${fmtRate(raw.perSecond)} records/s (${Math.round(recordBytes)} B, ${raw.batch} per send)`,
    );
    return raw;
  } finally {
    undo();
    await removeTopic();
  }
}

/** The headline rows every ingest scenario ends with: the raw bound and the ratio to it. */
export function rawHeadline(raw: RawProduceResult, acceptedPerSecond: number): [string, string][] {
  const spread =
    raw.keys === 1
      ? `one key (the organization), so one of ${raw.partitions} partitions`
      : `${raw.keys} keys (the organizations) over ${raw.partitions} partitions`;
  return [
    [
      'raw Kafka produce',
      `${fmtRate(raw.perSecond)} records/s, ${raw.mbPerSecond.toFixed(1)} MB/s (${raw.client}, idempotent, acks=all, ${fmtInt(raw.records)} records of ${Math.round(raw.recordBytes)} B, ${raw.batch} per send, ${spread}${raw.stoppedByDeadline ? '; stopped at its time bound' : ''})`,
    ],
    ['accepted ÷ raw', fmtRatio(acceptedPerSecond, raw.perSecond)],
  ];
}
