import { createSecretKey, KeyObject } from 'node:crypto';

/**
 * The HMAC keys of the secrets that signed lately, by secret. Node.js 24 spends most of an HMAC
 * over a short body checking whether a Buffer key is a KeyObject or a CryptoKey (about 9 µs
 * against 1.4 µs for a KeyObject, measured here), and every attempt signs with the same few
 * secrets, so each secret is parsed and turned into a KeyObject once. Bounded: past `capacity`
 * secrets the one used least recently is dropped, so a process serving many endpoints holds no
 * more keys than it would read for one intake.
 */
export class SigningKeys {
  private readonly keys = new Map<string, KeyObject>();

  constructor(
    private readonly parse: (secret: string) => Buffer,
    private readonly capacity = 4_096,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`capacity must be a positive integer, not ${capacity}`);
    }
  }

  /** The key of `secret`; throws what `parse` throws for a secret that is not valid. */
  keyOf(secret: string): KeyObject {
    const known = this.keys.get(secret);
    if (known) {
      // Most recently used last: Map keeps insertion order.
      this.keys.delete(secret);
      this.keys.set(secret, known);
      return known;
    }
    const key = createSecretKey(this.parse(secret));
    if (this.keys.size >= this.capacity) {
      this.keys.delete(this.keys.keys().next().value as string);
    }
    this.keys.set(secret, key);
    return key;
  }

  /** How many keys are held (for tests). */
  get size(): number {
    return this.keys.size;
  }
}
