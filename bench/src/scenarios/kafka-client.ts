import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  Consumer as PlatformaticConsumer,
  MessagesStreamModes,
  ProduceAcks,
  Producer as PlatformaticProducer,
} from '@platformatic/kafka';
import { Kafka, logLevel } from 'kafkajs';
import { ChartSeries } from '../chart';
import { now } from '../clock';
import { ROOT } from '../paths';
import { gitCommit, machine, ScenarioContext } from '../session';
import { RecordTally } from '../record-tally';
import { fmtInt, fmtRate } from '../report';
import { ScenarioResult } from '../result';
import { ratePerSecond } from '../stats';

/**
 * One send of `batch` records at a time, for both clients. Hookbase's producer sends that way,
 * and @platformatic/kafka 1.x's idempotent producer cannot do otherwise: concurrent send() calls
 * fail with OUT_OF_ORDER_SEQUENCE_NUMBER (kafkajs queues them).
 */
const SENDS_IN_FLIGHT = 1;
const PHASE_SECONDS = 40;

interface Record {
  key: Buffer;
  value: Buffer;
}

/** What the scenario needs of a client: produce batches, read a topic from the start. */
interface ClientUnderTest {
  name: string;
  version: string;
  connectProducer(): Promise<{
    send(topic: string, records: Record[]): Promise<void>;
    close(): Promise<void>;
  }>;
  consume(
    topic: string,
    groupId: string,
    onRecord: (value: Buffer) => void,
  ): Promise<{ close(): Promise<void> }>;
}

function kafkajsClient(brokers: string[]): ClientUnderTest {
  const kafka = new Kafka({
    clientId: 'hookbase-bench-kafkajs',
    brokers,
    logLevel: logLevel.NOTHING,
  });
  return {
    name: 'kafkajs',
    version: packageVersion('kafkajs'),
    async connectProducer() {
      // As Hookbase's producer: idempotent, one request in flight, acks=all.
      const producer = kafka.producer({
        idempotent: true,
        maxInFlightRequests: 1,
        allowAutoTopicCreation: false,
      });
      await producer.connect();
      return {
        send: async (topic, records) => {
          await producer.send({ topic, acks: -1, messages: records });
        },
        close: () => producer.disconnect(),
      };
    },
    async consume(topic, groupId, onRecord) {
      const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 100 });
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      await consumer.run({
        autoCommit: false,
        partitionsConsumedConcurrently: 8,
        eachBatch: async ({ batch }) => {
          for (const message of batch.messages) if (message.value) onRecord(message.value);
        },
      });
      return { close: () => consumer.disconnect() };
    },
  };
}

function platformaticClient(brokers: string[]): ClientUnderTest {
  return {
    name: '@platformatic/kafka',
    version: packageVersion('@platformatic/kafka'),
    async connectProducer() {
      // idempotent forces one request in flight (maxInflights = 1) in this client too.
      const producer = new PlatformaticProducer({
        clientId: 'hookbase-bench-platformatic',
        bootstrapBrokers: brokers,
        idempotent: true,
        acks: ProduceAcks.ALL,
        autocreateTopics: false,
      });
      return {
        send: async (topic, records) => {
          await producer.send({
            messages: records.map((r) => ({ topic, key: r.key, value: r.value })),
          });
        },
        close: () => producer.close(),
      };
    },
    async consume(topic, groupId, onRecord) {
      const consumer = new PlatformaticConsumer({
        clientId: 'hookbase-bench-platformatic',
        groupId,
        bootstrapBrokers: brokers,
        maxWaitTime: 100,
      });
      const stream = await consumer.consume({
        topics: [topic],
        mode: MessagesStreamModes.EARLIEST,
        autocommit: false,
      });
      stream.on('data', (message: { value: Buffer }) => onRecord(message.value));
      stream.on('error', () => undefined);
      return {
        close: async () => {
          try {
            await stream.close();
            await consumer.close(true);
          } catch {
            // closing after the run: nothing left to save
          }
        },
      };
    },
  };
}

function packageVersion(name: string): string {
  try {
    return (
      JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as {
        version: string;
      }
    ).version;
  } catch {
    return 'unknown';
  }
}

function record(seq: number, bytes: number): Record {
  const value = Buffer.alloc(Math.max(bytes, 4), 0x61);
  value.writeUInt32BE(seq, 0);
  return { key: Buffer.from(`k${seq % 1024}`), value };
}

interface PhaseResult {
  records: number;
  seconds: number;
  perSecond: number;
  mbPerSecond: number;
  stoppedByDeadline: boolean;
  startMs: number;
}

async function produce(
  client: ClientUnderTest,
  topic: string,
  tally: RecordTally,
  options: { records: number; messageBytes: number; batch: number },
  deadlineMs: number,
): Promise<PhaseResult> {
  const producer = await client.connectProducer();
  // One small send first: connection and producer-id set-up are not throughput.
  await producer.send(topic, [record(0, options.messageBytes)]);
  let next = 1; // record 0 went out with the warm-up (acknowledged below)
  tally.ack(0, 1, now());
  const startMs = now();
  let stoppedByDeadline = false;
  await Promise.all(
    Array.from({ length: SENDS_IN_FLIGHT }, async () => {
      while (next < options.records) {
        if (now() > deadlineMs) {
          stoppedByDeadline = true;
          return;
        }
        const from = next;
        const to = Math.min(options.records, from + options.batch);
        next = to;
        const records = [];
        for (let seq = from; seq < to; seq++) records.push(record(seq, options.messageBytes));
        await producer.send(topic, records);
        tally.ack(from, to, now());
      }
    }),
  );
  const seconds = (now() - startMs) / 1000;
  await producer.close();
  const produced = tally.ackedCount - 1;
  return {
    records: produced,
    seconds,
    perSecond: produced / seconds,
    mbPerSecond: (produced * options.messageBytes) / 1e6 / seconds,
    stoppedByDeadline,
    startMs,
  };
}

async function consume(
  client: ClientUnderTest,
  topic: string,
  groupId: string,
  tally: RecordTally,
  messageBytes: number,
  deadlineMs: number,
): Promise<PhaseResult & { joinSeconds: number }> {
  const startMs = now();
  const consumer = await client.consume(topic, groupId, (value) =>
    tally.read(value.readUInt32BE(0), now()),
  );
  while (tally.distinct < tally.ackedCount && now() < deadlineMs) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await consumer.close();
  const first = tally.readTimes[0] ?? now();
  const last = tally.readTimes[tally.readTimes.length - 1] ?? now();
  const seconds = (last - first) / 1000;
  return {
    records: tally.distinct,
    seconds,
    // From the first record read to the last: group join and the first fetch are not throughput.
    perSecond: ratePerSecond(tally.readTimes.length - 1, first, last),
    mbPerSecond: seconds > 0 ? ((tally.readTimes.length - 1) * messageBytes) / 1e6 / seconds : 0,
    stoppedByDeadline: tally.distinct < tally.ackedCount,
    startMs,
    joinSeconds: (first - startMs) / 1000,
  };
}

function rateSeries(
  name: string,
  color: string,
  events: { at: number; count: number }[],
  startMs: number,
): ChartSeries {
  const bucketMs = 250;
  const counts = new Map<number, number>();
  for (const { at, count } of events) {
    const bucket = Math.floor((at - startMs) / bucketMs);
    counts.set(bucket, (counts.get(bucket) ?? 0) + count);
  }
  const last = Math.max(0, ...counts.keys());
  return {
    name,
    color,
    points: Array.from(
      { length: last + 1 },
      (_, b) => [(b * bucketMs) / 1000, ((counts.get(b) ?? 0) * 1000) / bucketMs] as const,
    ),
  };
}

/**
 * kafka-client: raw throughput of kafkajs (what Hookbase uses) beside @platformatic/kafka on the
 * same broker: the same record size and count, keys and batches, an idempotent producer with
 * acks=all and one request in flight for both, each to a topic of its own (deleted afterwards);
 * then each client reads its topic back from the start in a fresh consumer group.
 */
export async function runKafkaClient(ctx: ScenarioContext): Promise<ScenarioResult> {
  const { options, progress, cleanup } = ctx;
  const startedMs = now();
  const runId = randomBytes(4).toString('hex');
  const brokers = options.brokers.split(',');
  const admin = new Kafka({
    clientId: 'hookbase-bench',
    brokers,
    logLevel: logLevel.NOTHING,
  }).admin();
  await admin.connect();
  const clients = [kafkajsClient(brokers), platformaticClient(brokers)];
  const topics = clients.map(
    (_, i) => `hookbase-bench-kc-${runId}-${i === 0 ? 'kafkajs' : 'platformatic'}`,
  );
  const groups = topics.map((topic) => `${topic}-reader`);
  const removeState = async () => {
    await admin.deleteGroups(groups).catch(() => undefined);
    await admin.deleteTopics({ topics, timeout: 15_000 }).catch(() => undefined);
    await admin.disconnect().catch(() => undefined);
  };
  const undo = cleanup.add('kafka-client topics', removeState);
  try {
    await admin.createTopics({
      waitForLeaders: true,
      topics: topics.map((topic) => ({
        topic,
        numPartitions: options.partitions,
        replicationFactor: -1,
      })),
    });
    const tallies = clients.map(() => new RecordTally(options.records));
    let phase = 'setup';
    let tally = tallies[0];
    progress.start(() => ({
      phase,
      elapsedSeconds: (now() - startedMs) / 1000,
      fraction: phase.includes('consume')
        ? tally.distinct / Math.max(1, tally.ackedCount)
        : tally.ackedCount / options.records,
      detail: `produced ${fmtInt(tally.ackedCount)} · consumed ${fmtInt(tally.distinct)}`,
    }));
    const produced: PhaseResult[] = [];
    const consumed: (PhaseResult & { joinSeconds: number })[] = [];
    for (const [i, client] of clients.entries()) {
      phase = `${client.name} produce`;
      tally = tallies[i];
      produced.push(
        await produce(
          client,
          topics[i],
          tally,
          options,
          Math.min(ctx.deadlineMs, now() + PHASE_SECONDS * 1000),
        ),
      );
    }
    for (const [i, client] of clients.entries()) {
      phase = `${client.name} consume`;
      tally = tallies[i];
      consumed.push(
        await consume(
          client,
          topics[i],
          groups[i],
          tally,
          options.messageBytes,
          Math.min(ctx.deadlineMs, now() + PHASE_SECONDS * 1000),
        ),
      );
    }
    progress.stop();

    const problems = clients.flatMap((client, i) => tallies[i].problems(client.name));
    clients.forEach((client, i) => {
      if (produced[i].stoppedByDeadline)
        problems.push(`${client.name}: produce stopped at its ${PHASE_SECONDS} s bound`);
    });
    const ratio = (a: number, b: number) => (b > 0 ? (a / b).toFixed(2) : '–');
    const colors = ['#1f77b4', '#d62728'];
    return {
      scenario: options.scenario,
      status: problems.length > 0 ? 'void' : 'ok',
      title: `${fmtInt(options.records)} records of ${options.messageBytes} B, ${options.partitions} partitions, batches of ${options.batch}, idempotent, acks=all`,
      startedAt: new Date(startedMs).toISOString(),
      durationSeconds: (now() - startedMs) / 1000,
      commit: gitCommit(),
      machine: machine(),
      topology: 'broker only',
      options: { ...options, databaseUrl: '(not used)' },
      summary: clients
        .map(
          (client, i) =>
            `${client.name} produce ${fmtRate(produced[i].perSecond)}/s, consume ${fmtRate(consumed[i].perSecond)}/s`,
        )
        .join(' · '),
      headline: [
        ...clients.map((client, i): [string, string] => [
          `${client.name} ${client.version}`,
          `produce ${fmtRate(produced[i].perSecond)} rec/s (${produced[i].mbPerSecond.toFixed(1)} MB/s) · consume ${fmtRate(consumed[i].perSecond)} rec/s (${consumed[i].mbPerSecond.toFixed(1)} MB/s)`,
        ]),
        [
          'platformatic ÷ kafkajs',
          `produce ${ratio(produced[1].perSecond, produced[0].perSecond)} · consume ${ratio(consumed[1].perSecond, consumed[0].perSecond)}`,
        ],
      ],
      tables: [
        {
          title: 'Clients',
          header: [
            'client',
            'version',
            'produced',
            'produce rec/s',
            'produce MB/s',
            'consumed',
            'consume rec/s',
            'consume MB/s',
            'join',
            'duplicates',
            'missing',
          ],
          rows: clients.map((client, i) => [
            client.name,
            client.version,
            fmtInt(tallies[i].ackedCount),
            fmtRate(produced[i].perSecond),
            produced[i].mbPerSecond.toFixed(1),
            fmtInt(tallies[i].distinct),
            fmtRate(consumed[i].perSecond),
            consumed[i].mbPerSecond.toFixed(1),
            `${consumed[i].joinSeconds.toFixed(1)} s`,
            fmtInt(tallies[i].duplicates),
            fmtInt(tallies[i].missing),
          ]),
        },
      ],
      runs: [],
      services: [],
      serviceLogs: null,
      harness: null,
      problems,
      notes: [
        `one send of ${options.batch} records at a time for each producer (concurrent sends fail on @platformatic/kafka's idempotent producer); each client's own defaults otherwise (no compression)`,
        'consume rate is from the first record read to the last (group join shown apart)',
      ],
      extra: { topics, produced, consumed: consumed.map((c) => ({ ...c })) },
      chart: {
        title: 'Hookbase bench: kafka-client',
        subtitle: `${fmtInt(options.records)} × ${options.messageBytes} B records · ${gitCommit()} · ${new Date().toISOString().slice(0, 16)}Z`,
        xLabel: 'seconds since the phase started',
        panels: [
          {
            title: 'Produce (acknowledged)',
            unit: 'records/s',
            series: clients.map((client, i) =>
              rateSeries(client.name, colors[i], tallies[i].ackTimes.slice(1), produced[i].startMs),
            ),
          },
          {
            title: 'Consume',
            unit: 'records/s',
            series: clients.map((client, i) =>
              rateSeries(
                client.name,
                colors[i],
                tallies[i].readTimes.map((at) => ({ at, count: 1 })),
                consumed[i].startMs,
              ),
            ),
          },
        ],
      },
      files: null,
    };
  } finally {
    progress.stop();
    undo();
    await removeState();
  }
}
