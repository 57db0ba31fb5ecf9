/**
 * The seam between Hookbase's producing (grouping, bounded requests, timeouts: KafkaProducer) and
 * a Kafka client library. One adapter per client; HOOKBASE_KAFKA_PRODUCER picks one at boot.
 */

/** One record as Hookbase writes it: a key (the partition's choice), a value, string headers. */
export interface ProducedRecord {
  key?: Buffer | string | null;
  value: Buffer | string | null;
  headers?: Record<string, Buffer | string | undefined>;
}

/**
 * What every adapter promises: idempotent, `acks=all`, records of a topic written in the order
 * given, and a key placed on the partition Kafka's Java client (and kafkajs's default
 * partitioner) would choose: murmur2 of the key, positive, modulo the partition count. The FIFO
 * lanes and the per-organization order rely on that placement staying the same across clients.
 */
export interface ProducerClient {
  /** Resolves once the broker acknowledged every record; one send at a time per topic is enough. */
  send(topic: string, records: readonly ProducedRecord[]): Promise<void>;
  /** Closes every connection; sends after it are not expected. */
  close(): Promise<void>;
}
