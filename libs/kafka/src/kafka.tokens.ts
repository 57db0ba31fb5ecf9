/** Injection tokens of the Kafka module: the kafkajs client and the installation's topic names. */
export const KAFKA = Symbol('KAFKA');
export const TOPICS = Symbol('TOPICS');
