import type * as Platformatic from '@platformatic/kafka';
import { ProducedRecord, ProducerClient } from './producer-client';

type Message = Platformatic.MessageToProduce<Buffer, Buffer, Buffer, Buffer>;
type Producer = Platformatic.Producer<Buffer, Buffer, Buffer, Buffer>;

/** What the adapter needs of `@platformatic/kafka`'s producer; tests hand it a stand-in. */
export type PlatformaticProducer = Pick<Producer, 'send' | 'close'>;

export interface PlatformaticProducerSettings {
  clientId: string;
  brokers: string[];
}

/** The record as `@platformatic/kafka` takes it with its default (Buffer) serializers. */
export function toPlatformaticMessage(topic: string, record: ProducedRecord): Message {
  const message: Message = { topic };
  if (record.key !== null && record.key !== undefined) message.key = keptBuffer(record.key);
  if (record.value !== null) message.value = toBuffer(record.value);
  if (record.headers) {
    const headers = new Map<Buffer, Buffer>();
    for (const name in record.headers) {
      const value = record.headers[name];
      if (value === undefined) continue;
      headers.set(
        keptBuffer(name),
        typeof value === 'string' && value.length <= KEPT_VALUE_MAX
          ? keptBuffer(value)
          : toBuffer(value),
      );
    }
    message.headers = headers;
  }
  return message;
}

function toBuffer(value: Buffer | string): Buffer {
  return typeof value === 'string' ? Buffer.from(value) : value;
}

/** Header values this short (an origin, a flag) are kept; longer ones (a trace context) are not. */
const KEPT_VALUE_MAX = 16;
/** Texts kept as buffers at most; past it the memory starts over. */
const KEPT_TEXTS_MAX = 10_000;
let keptTexts = new Map<string, Buffer>();

/**
 * The bytes of a key or header text that repeats (organization and endpoint ids, header names),
 * made once: the library only reads them, and a buffer per record was a share of ingest's
 * allocation.
 */
export function keptBuffer(text: Buffer | string): Buffer {
  if (typeof text !== 'string') return text;
  let bytes = keptTexts.get(text);
  if (bytes === undefined) {
    if (keptTexts.size >= KEPT_TEXTS_MAX) keptTexts = new Map();
    bytes = Buffer.from(text);
    keptTexts.set(text, bytes);
  }
  return bytes;
}

/** Retries back off from 200 ms to 5 s, as the kafkajs client's do. */
export function retryDelayMs(attempt: number): number {
  return Math.min(5_000, 200 * 2 ** Math.max(0, attempt - 1));
}

/**
 * The library's retry delay for a topic's producer, which also tells `warn` of each retry: the
 * library reports through `node:diagnostics_channel` and `debug` only, so without it a broker
 * outage would leave no line in the producer's log.
 */
export function warnedRetryDelay(
  topic: string,
  warn: (line: string) => void,
): (
  client: unknown,
  operation: string,
  attempt: number,
  retries: number,
  error: unknown,
) => number {
  return (_client, operation, attempt, retries, error) => {
    const delay = retryDelayMs(attempt);
    const why = error instanceof Error ? error.message : String(error);
    warn(
      `producing to ${topic}: ${operation} failed (${why}); retry ${attempt} of ${retries} in ${delay} ms`,
    );
    return delay;
  };
}

/** Keys whose hash is remembered at most; past it the memory starts over. */
const KEY_HASHES_MAX = 100_000;

/**
 * A key's hash, remembered: keys repeat (endpoint and organization ids), and the library's
 * murmur2 works in BigInt, about 2 KB of garbage and a few microseconds per record. The hash
 * does not depend on the topic or its partition count (the library takes it modulo those), so
 * one memory serves every producer of the process.
 */
export function rememberedKeyHash(
  hash: (key: Buffer) => number,
  max = KEY_HASHES_MAX,
): (key: Buffer) => number {
  let known = new Map<string, number>();
  return (key) => {
    // latin1 maps each byte to one character: distinct keys stay distinct.
    const text = key.toString('latin1');
    let value = known.get(text);
    if (value === undefined) {
      value = hash(key);
      if (known.size >= max) known = new Map();
      known.set(text, value);
    }
    return value;
  };
}

let keyHash: ((key: Buffer) => number) | undefined;

let library: typeof Platformatic | undefined;

/**
 * `@platformatic/kafka`, loaded on the first call. It is not imported at the top because the package
 * is ES modules only, so a process (or a Jest run) that produces through kafkajs never loads it.
 * Loading it with `require` is synchronous and takes a few hundred milliseconds, during which the
 * process serves nothing. Processes that produce through it therefore load it when their client
 * is made, at boot (`createProducerClient`), and not on their first send.
 */
export function loadPlatformaticKafka(): typeof Platformatic {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  library ??= require('@platformatic/kafka') as typeof Platformatic;
  return library;
}

/**
 * A producer of `@platformatic/kafka` for one topic: idempotent, `acks=all`, and keys placed as
 * kafkajs's default partitioner places them. The library's own default partitioner takes murmur2
 * as an unsigned number, which lands some keys elsewhere; its `compatibilityPartitioner` masks
 * the sign bit as Kafka's Java client does. A record without a key goes round-robin.
 */
export function createPlatformaticProducer(
  settings: PlatformaticProducerSettings,
  topic: string,
  warn: (line: string) => void = () => undefined,
): PlatformaticProducer {
  const client = loadPlatformaticKafka();
  let nextPartition = 0;
  keyHash ??= rememberedKeyHash((key) => client.compatibilityPartitioner({} as never, key));
  const hashOf = keyHash;
  return new client.Producer<Buffer, Buffer, Buffer, Buffer>({
    clientId: `${settings.clientId}-${topic}`,
    bootstrapBrokers: settings.brokers,
    idempotent: true,
    acks: client.ProduceAcks.ALL,
    autocreateTopics: false,
    // As the kafkajs client: a request may take 30 s, and a failed one is tried 8 more times.
    timeout: 30_000,
    retries: 8,
    retryDelay: warnedRetryDelay(topic, warn),
    partitioner: (_message, key) => (key ? hashOf(key) : nextPartition++),
  });
}

/**
 * Producing through `@platformatic/kafka`. Each topic gets a producer of its own (as with
 * kafkajs), and a topic's sends go one at a time: the library's idempotent producer numbers a
 * partition's records when a request is built, and two requests in flight at once may reach the
 * broker out of that order (1.x answered `OUT_OF_ORDER_SEQUENCE_NUMBER`).
 */
export class PlatformaticProducerClient implements ProducerClient {
  private readonly producers = new Map<string, PlatformaticProducer>();
  /** Per topic: the send in flight (or the last), which the next waits for. */
  private readonly tails = new Map<string, Promise<unknown>>();

  constructor(private readonly create: (topic: string) => PlatformaticProducer) {}

  private producer(topic: string): PlatformaticProducer {
    let producer = this.producers.get(topic);
    if (!producer) {
      producer = this.create(topic);
      this.producers.set(topic, producer);
    }
    return producer;
  }

  send(topic: string, records: readonly ProducedRecord[]): Promise<void> {
    const messages = records.map((record) => toPlatformaticMessage(topic, record));
    const previous = this.tails.get(topic) ?? Promise.resolve();
    const sent = previous
      .catch(() => undefined)
      .then(() => this.producer(topic).send({ messages }))
      .then(() => undefined);
    this.tails.set(topic, sent);
    return sent;
  }

  async close(): Promise<void> {
    const producers = [...this.producers.values()];
    this.producers.clear();
    await Promise.all(producers.map((producer) => producer.close().catch(() => undefined)));
  }
}
