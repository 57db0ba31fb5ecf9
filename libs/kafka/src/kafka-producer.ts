import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { CompressionTypes, Kafka, Message, Partitioners, Producer } from 'kafkajs';
import { GroupedWork } from '@hookbase/domain';
import { KAFKA } from './kafka.tokens';

/** Kafka did not acknowledge in time; the record may or may not have been stored. */
export class PublishTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`Kafka did not acknowledge within ${timeoutMs} ms`);
    this.name = 'PublishTimeoutError';
  }
}

// A group is one produce request: bounded in count and bytes so that it stays well under the
// broker's per-batch limit (message.max.bytes, 1 MiB by default).
const MAX_GROUP_RECORDS = 1000;
const MAX_GROUP_BYTES = 512 * 1024;

function groupSize(messages: readonly Message[]): number {
  let bytes = 0;
  let count = 0;
  for (const message of messages) {
    bytes += (message.value?.length ?? 0) + (message.key?.length ?? 0);
    if (count > 0 && (bytes > MAX_GROUP_BYTES || count >= MAX_GROUP_RECORDS)) break;
    count++;
  }
  return count;
}

/**
 * A process's producing: idempotent, `acks=all`, so a send resolves only once the record is
 * durably in the log and a retried send is not written twice. Each topic gets a producer of its
 * own: an idempotent producer keeps one request in flight, so with one for all, a process that
 * ingests, fans out and dead-letters (the standalone one) would queue each stage's sends behind
 * the others'. Order holds where Kafka keeps it, per partition, since a topic's records all go
 * through its one producer.
 */
@Injectable()
export class KafkaProducer implements OnApplicationShutdown {
  /** One idempotent producer per topic written, made on first use (see the class comment). */
  private readonly producers = new Map<string, Promise<Producer>>();
  /** Per topic: while a send is in flight, new records wait and go together in the next. */
  private readonly queues = new Map<string, GroupedWork<Message, void>>();

  constructor(@Inject(KAFKA) private readonly kafka: Kafka) {}

  private connect(topic: string): Promise<Producer> {
    let connecting = this.producers.get(topic);
    if (!connecting) {
      const producer = this.kafka.producer({
        idempotent: true,
        maxInFlightRequests: 1,
        // murmur2 of the key, as Kafka's own clients do (also silences kafkajs's v2 notice).
        createPartitioner: Partitioners.DefaultPartitioner,
        allowAutoTopicCreation: false,
      });
      connecting = producer.connect().then(() => producer);
      // A producer that could not connect is made afresh by the next send.
      connecting.catch(() => this.producers.delete(topic));
      this.producers.set(topic, connecting);
    }
    return connecting;
  }

  /** Sends records in order, in produce requests of bounded size; resolves once all are acked. */
  async send(topic: string, messages: Message[]): Promise<void> {
    const producer = await this.connect(topic);
    for (let start = 0; start < messages.length;) {
      const size = groupSize(messages.slice(start, start + MAX_GROUP_RECORDS));
      const chunk = messages.slice(start, start + size);
      await producer.send({ topic, messages: chunk, acks: -1, compression: CompressionTypes.None });
      start += size;
    }
  }

  /**
   * Sends one record, grouped with others sent meanwhile: while a send is in flight, new records
   * queue and go together in the next send. No timer, so an idle producer adds no latency, and a
   * busy one turns many small sends into few large ones. Resolves once the broker acknowledged.
   */
  async publish(topic: string, message: Message, timeoutMs?: number): Promise<void> {
    let queue = this.queues.get(topic);
    if (!queue) {
      queue = new GroupedWork<Message, void>(
        async (messages) => {
          await this.send(topic, messages);
          return messages.map(() => undefined);
        },
        { maxItems: MAX_GROUP_RECORDS, start: 'at-once' },
      );
      this.queues.set(topic, queue);
    }
    if (timeoutMs === undefined) {
      await queue.run([message]);
      return;
    }
    // The caller stops waiting. A record still queued is never sent (withdrawn); one already in
    // a produce request may yet be stored: the caller cannot know, and says so.
    const giveUp = new AbortController();
    const timer = setTimeout(() => giveUp.abort(new PublishTimeoutError(timeoutMs)), timeoutMs);
    try {
      await queue.run([message], giveUp.signal);
    } finally {
      clearTimeout(timer);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    const producers = [...this.producers.values()];
    this.producers.clear();
    await Promise.all(
      producers.map((connecting) =>
        connecting.then((producer) => producer.disconnect()).catch(() => undefined),
      ),
    );
  }
}
