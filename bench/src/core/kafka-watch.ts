import { Admin, Consumer, Kafka, logLevel } from 'kafkajs';
import { now } from './util';

/** The fields of a DLQ record the ledger needs (Hookbase's DlqRecord has more). */
export interface DeadLetter {
  eventId: string;
  endpointId: string;
  messageId: string;
  reason: string;
}

export interface ConsumerLag {
  /** Records in `<prefix>.deliveries` not yet committed by the dispatcher group. */
  dispatcher: number;
  /** Records in `<prefix>.events` not yet committed by the fan-out group. */
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
  readonly groupId: string;
  readonly errors: string[] = [];
  malformedDeadLetters = 0;

  constructor(
    brokers: string,
    private readonly topicPrefix: string,
    runId: string,
  ) {
    this.groupId = `hookbase-bench-dlq-${runId}`;
    this.kafka = new Kafka({
      clientId: 'hookbase-bench',
      brokers: brokers.split(','),
      logLevel: logLevel.ERROR,
      // Kept for the report instead of written over the progress bar.
      logCreator: () => (entry) => {
        if (this.errors.length < 20) this.errors.push(entry.log.message);
      },
    });
  }

  async start(onDeadLetter: (record: DeadLetter) => void): Promise<void> {
    this.admin = this.kafka.admin();
    await this.admin.connect();
    const consumer = this.kafka.consumer({ groupId: this.groupId, maxWaitTimeInMs: 100 });
    this.consumer = consumer;
    await consumer.connect();
    await consumer.subscribe({ topic: `${this.topicPrefix}.dlq`, fromBeginning: true });
    await consumer.run({
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

  async partitionCount(topic: string): Promise<number> {
    const { topics } = await this.requireAdmin().fetchTopicMetadata({ topics: [topic] });
    return topics[0].partitions.length;
  }

  async lag(): Promise<ConsumerLag> {
    const [dispatcher, fanout] = await Promise.all([
      this.groupLag(`${this.topicPrefix}.dispatcher`, `${this.topicPrefix}.deliveries`),
      this.groupLag(`${this.topicPrefix}.fanout`, `${this.topicPrefix}.events`),
    ]);
    return { dispatcher, fanout };
  }

  private async groupLag(groupId: string, topic: string): Promise<number> {
    const admin = this.requireAdmin();
    const [ends, committed] = await Promise.all([
      admin.fetchTopicOffsets(topic),
      admin.fetchOffsets({ groupId, topics: [topic] }),
    ]);
    const byPartition = new Map(
      (committed[0]?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]),
    );
    let lag = 0;
    for (const end of ends) {
      const commit = byPartition.get(end.partition) ?? -1;
      // No commit yet: everything from the log start is still to be consumed.
      const from = commit >= 0 ? commit : Number(end.low);
      lag += Math.max(0, Number(end.high) - from);
    }
    return lag;
  }

  /** Records ever written to a topic (the sum of its partitions' high watermarks). */
  async highWatermarks(topic: string): Promise<number> {
    const offsets = await this.requireAdmin().fetchTopicOffsets(topic);
    return offsets.reduce((sum, p) => sum + Number(p.high), 0);
  }

  /**
   * Reads `groupId`'s committed offsets on `topic` every `everyMs` (one request at a time) and
   * hands each partition's offset to `onCommitted` with the time it was seen, until the stop
   * function it returns is called.
   */
  pollCommits(
    groupId: string,
    topic: string,
    everyMs: number,
    onCommitted: (partition: number, offset: number, at: number) => void,
  ): () => Promise<void> {
    const admin = this.requireAdmin();
    let running = true;
    const loop = (async () => {
      while (running) {
        const started = now();
        const [offsets] = await admin.fetchOffsets({ groupId, topics: [topic] }).catch(() => []);
        const at = now();
        for (const { partition, offset } of offsets?.partitions ?? [])
          if (Number(offset) >= 0) onCommitted(partition, Number(offset), at);
        const wait = everyMs - (now() - started);
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      }
    })();
    return async () => {
      running = false;
      await loop;
    };
  }

  private requireAdmin(): Admin {
    if (!this.admin) throw new Error('KafkaWatch not started');
    return this.admin;
  }

  async stop(): Promise<void> {
    await this.consumer?.disconnect().catch(() => undefined);
    await this.admin?.deleteGroups([this.groupId]).catch(() => undefined);
    await this.admin?.disconnect().catch(() => undefined);
  }
}
