/** Injection tokens of the Kafka module: the kafkajs client and the installation's topic names. */
export const KAFKA = Symbol('KAFKA');
export const TOPICS = Symbol('TOPICS');
/** The ProducerClient that HOOKBASE_KAFKA_PRODUCER chose (kafkajs or `@platformatic/kafka`). */
export const PRODUCER_CLIENT = Symbol('PRODUCER_CLIENT');
