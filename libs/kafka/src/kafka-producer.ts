import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { GroupedWork } from '@hookbase/domain';
import { PRODUCER_CLIENT } from './kafka.tokens';
import { ProducedRecord, ProducerClient } from './producer-client';

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

function groupSize(messages: readonly ProducedRecord[]): number {
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
 * durably in the log and a retried send is not written twice. The client library is behind
 * ProducerClient (kafkajs or `@platformatic/kafka`, HOOKBASE_KAFKA_PRODUCER); this class groups
 * records into bounded requests and gives up waiting on request. Order holds where Kafka keeps
 * it, per partition: the clients send a topic's requests one at a time, in the order given.
 */
@Injectable()
export class KafkaProducer implements OnApplicationShutdown {
  /** Per topic: while a send is in flight, new records wait and go together in the next. */
  private readonly queues = new Map<string, GroupedWork<ProducedRecord, void>>();

  constructor(@Inject(PRODUCER_CLIENT) private readonly client: ProducerClient) {}

  /** Sends records in order, in produce requests of bounded size; resolves once all are acked. */
  async send(topic: string, messages: ProducedRecord[]): Promise<void> {
    for (let start = 0; start < messages.length;) {
      const size = groupSize(messages.slice(start, start + MAX_GROUP_RECORDS));
      const chunk = messages.slice(start, start + size);
      await this.client.send(topic, chunk);
      start += size;
    }
  }

  /**
   * Sends one record, grouped with others sent meanwhile: while a send is in flight, new records
   * queue and go together in the next send. No timer, so an idle producer adds no latency, and a
   * busy one turns many small sends into few large ones. Resolves once the broker acknowledged.
   */
  publish(topic: string, message: ProducedRecord, timeoutMs?: number): Promise<void> {
    return this.publishAll(topic, [message], timeoutMs);
  }

  /**
   * Sends records together, as `publish` sends one: they stay together and in order in one group
   * (a batch of events costs one wait and one timer, not one per event). Resolves once the broker
   * acknowledged all of them; rejects for all of them.
   */
  async publishAll(topic: string, messages: ProducedRecord[], timeoutMs?: number): Promise<void> {
    let queue = this.queues.get(topic);
    if (!queue) {
      queue = new GroupedWork<ProducedRecord, void>(
        async (grouped) => {
          await this.send(topic, grouped);
          return grouped.map(() => undefined);
        },
        { maxItems: MAX_GROUP_RECORDS, start: 'at-once' },
      );
      this.queues.set(topic, queue);
    }
    if (timeoutMs === undefined) {
      await queue.run(messages);
      return;
    }
    // The caller stops waiting. Records still queued are never sent (withdrawn); those already in
    // a produce request may yet be stored: the caller cannot know, and says so.
    const giveUp = new AbortController();
    const timer = setTimeout(() => giveUp.abort(new PublishTimeoutError(timeoutMs)), timeoutMs);
    try {
      await queue.run(messages, { signal: giveUp.signal });
    } finally {
      clearTimeout(timer);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.client.close();
  }
}
