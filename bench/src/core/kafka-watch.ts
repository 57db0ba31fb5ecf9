import { Admin, Consumer, Kafka, logLevel } from 'kafkajs';
import { now } from './util';

/** The fields of a DLQ record the ledger needs (Hookbase's DlqRecord has more). */
export interface DeadLetter {
  eventId: string;
  endpointId: string;
  reason: string;
}

/** Records not yet committed: `<prefix>.deliveries` by the dispatcher, `.events` by the fan-out. */
export interface ConsumerLag {
  dispatcher: number;
  fanout: number;
}

/**
 * The bench's view into Kafka: reads `<prefix>.dlq` into the ledger (dead letters are counted
 * from the records themselves, not from a metric) and measures consumer lag from committed
 * offsets against the partitions' high watermarks.
 */
export class KafkaWatch {
  private readonly kafka: Kafka;
  private admin: Admin | undefined;
  private consumer: Consumer | undefined;
  private readonly groupId: string;
  /** The client's errors, kept for the report instead of written over the progress line. */
  readonly errors: string[] = [];
  malformedDeadLetters = 0;

  constructor(
    brokers: string,
    private readonly prefix: string,
    runId: string,
  ) {
    this.groupId = `hookbase-bench-dlq-${runId}`;
    this.kafka = new Kafka({
      clientId: 'hookbase-bench',
      brokers: brokers.split(','),
      logLevel: logLevel.ERROR,
      logCreator: () => (entry) =>
        void (this.errors.length < 20 && this.errors.push(entry.log.message)),
    });
  }

  async start(onDeadLetter: (record: DeadLetter) => void): Promise<void> {
    this.admin = this.kafka.admin();
    await this.admin.connect();
    this.consumer = this.kafka.consumer({ groupId: this.groupId, maxWaitTimeInMs: 100 });
    await this.consumer.connect();
    await this.consumer.subscribe({ topic: `${this.prefix}.dlq`, fromBeginning: true });
    await this.consumer.run({
      eachMessage: async ({ message }) => {
        try {
          const record = JSON.parse(message.value?.toString('utf8') ?? '') as DeadLetter;
          if (typeof record.eventId !== 'string' || typeof record.endpointId !== 'string')
            throw new Error();
          onDeadLetter(record);
        } catch {
          this.malformedDeadLetters++;
        }
      },
    });
  }

  private get connected(): Admin {
    if (!this.admin) throw new Error('KafkaWatch not started');
    return this.admin;
  }

  async partitionCount(topic: string): Promise<number> {
    const { topics } = await this.connected.fetchTopicMetadata({ topics: [topic] });
    return topics[0].partitions.length;
  }

  async lag(): Promise<ConsumerLag> {
    const lagOf = async (group: string, topic: string) => {
      const [ends, [committed]] = await Promise.all([
        this.connected.fetchTopicOffsets(topic),
        this.connected.fetchOffsets({ groupId: group, topics: [topic] }),
      ]);
      const at = new Map(committed?.partitions.map((p) => [p.partition, Number(p.offset)]));
      // No commit yet: everything from the log start is still to be consumed.
      return ends.reduce((lag, end) => {
        const commit = at.get(end.partition) ?? -1;
        return lag + Math.max(0, Number(end.high) - (commit >= 0 ? commit : Number(end.low)));
      }, 0);
    };
    const [dispatcher, fanout] = await Promise.all([
      lagOf(`${this.prefix}.dispatcher`, `${this.prefix}.deliveries`),
      lagOf(`${this.prefix}.fanout`, `${this.prefix}.events`),
    ]);
    return { dispatcher, fanout };
  }

  /** Records ever written to a topic (the sum of its partitions' high watermarks). */
  async highWatermarks(topic: string): Promise<number> {
    const offsets = await this.connected.fetchTopicOffsets(topic);
    return offsets.reduce((sum, p) => sum + Number(p.high), 0);
  }

  /**
   * Reads `groupId`'s committed offsets on `topic` every `everyMs` (one request at a time) and
   * hands each partition's offset to `onCommitted` with the time it was seen, until stopped.
   */
  pollCommits(
    groupId: string,
    topic: string,
    everyMs: number,
    onCommitted: (partition: number, offset: number, at: number) => void,
  ): () => Promise<void> {
    let running = true;
    const loop = (async () => {
      while (running) {
        const started = now();
        const [offsets] = await this.connected
          .fetchOffsets({ groupId, topics: [topic] })
          .catch(() => []);
        const at = now();
        for (const { partition, offset } of offsets?.partitions ?? [])
          if (Number(offset) >= 0) onCommitted(partition, Number(offset), at);
        await new Promise((resolve) =>
          setTimeout(resolve, Math.max(0, everyMs - (now() - started))),
        );
      }
    })();
    return async () => {
      running = false;
      await loop;
    };
  }

  async stop(): Promise<void> {
    await this.consumer?.disconnect().catch(() => undefined);
    await this.admin?.deleteGroups([this.groupId]).catch(() => undefined);
    await this.admin?.disconnect().catch(() => undefined);
  }
}
