/**
 * Which partition of `<prefix>.deliveries` an endpoint's messages land on. Hookbase keys
 * deliveries by endpoint id and produces with kafkajs's default partitioner (the Java client's:
 * murmur2 of the key, made positive, modulo the partition count), so the bench can place
 * endpoints on one partition on purpose (the isolation scenario) without asking Kafka.
 */

const SEED = 0x9747b28c;
const M = 0x5bd1e995;
const R = 24;

/** Kafka's murmur2 (org.apache.kafka.common.utils.Utils.murmur2), as a signed 32-bit integer. */
export function murmur2(key: string | Buffer): number {
  const data = typeof key === 'string' ? Buffer.from(key, 'utf8') : key;
  const length = data.length;
  let h = SEED ^ length;
  const whole = length - (length % 4);
  for (let i = 0; i < whole; i += 4) {
    let k = data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24);
    k = Math.imul(k, M);
    k ^= k >>> R;
    k = Math.imul(k, M);
    h = Math.imul(h, M);
    h ^= k;
  }
  const tail = length % 4;
  if (tail === 3) h ^= data[whole + 2] << 16;
  if (tail >= 2) h ^= data[whole + 1] << 8;
  if (tail >= 1) {
    h ^= data[whole];
    h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}

/** The partition kafkajs's default partitioner picks for a keyed record. */
export function partitionFor(key: string, partitions: number): number {
  if (!Number.isInteger(partitions) || partitions < 1) {
    throw new Error(`partition count must be a positive integer, got ${partitions}`);
  }
  return (murmur2(key) & 0x7fffffff) % partitions;
}

/** A stable number in [0, 1) from an id: the receiver's "fail this share" draws from it. */
export function unitFraction(id: string): number {
  return (murmur2(id) >>> 0) / 2 ** 32;
}
