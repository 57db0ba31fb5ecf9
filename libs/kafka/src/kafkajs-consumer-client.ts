import { Consumer, Kafka } from 'kafkajs';
import { ConsumerClient, ConsumerClientEvents, ConsumerSettings } from './consumer-client';

/**
 * A consumer group member through kafkajs. kafkajs cannot leave one partition out of its fetches
 * without a pause call, so a partition whose window is full holds its batch (and with it the
 * fetches of its broker) until room frees.
 */
export class KafkajsConsumerClient implements ConsumerClient {
  private consumer: Consumer | undefined;

  constructor(
    private readonly kafka: Kafka,
    private readonly settings: ConsumerSettings,
  ) {}

  async start(events: ConsumerClientEvents): Promise<void> {
    const { settings } = this;
    const consumer = this.kafka.consumer({
      groupId: settings.groupId,
      allowAutoTopicCreation: false,
      sessionTimeout: settings.sessionTimeoutMs,
      heartbeatInterval: Math.max(500, Math.floor(settings.sessionTimeoutMs / 10)),
      maxBytesPerPartition: settings.maxBytesPerPartition,
      maxWaitTimeInMs: 100,
    });
    this.consumer = consumer;
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      events.joined(payload.memberAssignment[settings.topic]?.length ?? 0);
    });
    consumer.on(consumer.events.REBALANCING, () => events.unassigned());
    consumer.on(consumer.events.DISCONNECT, () => {
      events.unassigned();
      events.problem('disconnected from Kafka');
    });
    // kafkajs gives a consumer up for good on an error it does not take for transient: it has
    // disconnected it and will not restart it.
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      events.failed(payload.error, payload.restart);
    });
    await consumer.connect();
    await consumer.subscribe({ topic: settings.topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: settings.partitionsConsumedConcurrently,
      eachBatch: async ({ batch, heartbeat, isRunning, isStale, resolveOffset }) => {
        if (batch.messages.length === 0) return;
        const records = batch.messages.map((message) => ({
          partition: batch.partition,
          offset: message.offset,
          key: message.key ? message.key.toString() : null,
          value: message.value,
          timestamp: message.timestamp,
          headers: message.headers,
        }));
        const taken = await events.batch(
          { topic: batch.topic, partition: batch.partition, records },
          { heartbeat, isActive: () => isRunning() && !isStale() },
        );
        // kafkajs fetches on from the offset after the last one resolved: the rest come again.
        if (taken > 0) resolveOffset(batch.messages[taken - 1].offset);
      },
    });
  }

  async commit(
    offsets: readonly { topic: string; partition: number; offset: string }[],
  ): Promise<void> {
    await this.consumer?.commitOffsets([...offsets]);
  }

  async close(): Promise<void> {
    await this.consumer?.disconnect();
  }
}
