/**
 * Values read from the database, each kept at the version it was read at: a reader asks for the
 * version the database has now, so a change anywhere (another process, the API, SQL by hand) is
 * seen at the next read. Bounded by weight (what a value counts for: an endpoint 1, an
 * organization's recipients their number): past `capacity` the values kept longest go first, and a
 * value heavier than the capacity is not kept.
 */
export class KeptByVersion<T> {
  private readonly entries = new Map<string, { version: string; value: T; weight: number }>();
  private weight = 0;

  constructor(private readonly capacity: number) {}

  /** The value kept for `key`, if it was read at `version`. */
  get(key: string, version: string): T | undefined {
    const kept = this.entries.get(key);
    return kept && kept.version === version ? kept.value : undefined;
  }

  /** The value kept for `key` and the version it was read at, whatever the version is now. */
  latest(key: string): { version: string; value: T } | undefined {
    const kept = this.entries.get(key);
    return kept && { version: kept.version, value: kept.value };
  }

  put(key: string, version: string, value: T, weight = 1): void {
    this.drop(key);
    if (weight > this.capacity) return;
    for (const oldest of this.entries.keys()) {
      if (this.weight + weight <= this.capacity) break;
      this.drop(oldest);
    }
    this.entries.set(key, { version, value, weight });
    this.weight += weight;
  }

  /** How much is kept, by weight. */
  get size(): number {
    return this.weight;
  }

  private drop(key: string): void {
    const kept = this.entries.get(key);
    if (!kept) return;
    this.entries.delete(key);
    this.weight -= kept.weight;
  }
}

/** Freezes a value and everything in it, so that a kept value cannot be changed by a reader. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}
