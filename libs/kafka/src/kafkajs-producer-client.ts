import { CompressionTypes, Kafka, Partitioners, Producer } from 'kafkajs';
import { ProducedRecord, ProducerClient } from './producer-client';

/**
 * Producing through kafkajs. Each topic gets an idempotent producer of its own: an idempotent
 * producer keeps one request in flight, so with one for all, a process that ingests, fans out and
 * dead-letters (the standalone one) would queue each stage's sends behind the others'.
 */
export class KafkajsProducerClient implements ProducerClient {
  /** One idempotent producer per topic written, made on first use. */
  private readonly producers = new Map<string, Promise<Producer>>();

  constructor(private readonly kafka: Kafka) {}

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

  async send(topic: string, records: readonly ProducedRecord[]): Promise<void> {
    const producer = await this.connect(topic);
    await producer.send({
      topic,
      messages: [...records],
      acks: -1,
      compression: CompressionTypes.None,
    });
  }

  async close(): Promise<void> {
    const producers = [...this.producers.values()];
    this.producers.clear();
    await Promise.all(
      producers.map((connecting) =>
        connecting.then((producer) => producer.disconnect()).catch(() => undefined),
      ),
    );
  }
}
