import type { EndpointEntity } from '../entities';

/** A signing secret as kept: opened, and when it stops signing (null: it has not been retired). */
export interface KeptSecret {
  secret: string;
  expiresAt: number | null;
}

/** What a process keeps of an endpoint it delivered to, at one configuration version. */
export interface KeptEndpoint {
  /** The endpoint's `config_version` when it was read. */
  version: string;
  /** The time the secrets were chosen at (those already retired then were not read). */
  readAt: number;
  /** Every column but the health columns, frozen: shared by every read that uses it. */
  columns: Readonly<Partial<EndpointEntity>>;
  /** Newest first, as they sign. */
  secrets: readonly KeptSecret[];
}

/**
 * The endpoints a dispatcher read, by id, each valid only at the configuration version it was read
 * at: a read asks for the version the database has now, so a change anywhere (another process,
 * the API) is seen at the next read. Bounded: past `capacity` the oldest entry goes first.
 */
export class DeliveryEndpointCache {
  private readonly entries = new Map<string, KeptEndpoint>();

  constructor(private readonly capacity = 10_000) {}

  /** The endpoint as kept, if it was read at `version` and its secrets can be chosen at `at`. */
  get(id: string, version: string, at: number): KeptEndpoint | undefined {
    const kept = this.entries.get(id);
    if (!kept || kept.version !== version || at < kept.readAt) return undefined;
    return kept;
  }

  put(id: string, kept: KeptEndpoint): void {
    this.entries.delete(id);
    if (this.entries.size >= this.capacity) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(id, kept);
  }

  get size(): number {
    return this.entries.size;
  }
}

/** The secrets of a kept endpoint that sign at `at`, newest first. */
export function secretsSigningAt(kept: KeptEndpoint, at: number): string[] {
  const signing: string[] = [];
  for (const { secret, expiresAt } of kept.secrets) {
    if (expiresAt === null || expiresAt > at) signing.push(secret);
  }
  return signing;
}

/** Freezes a value and everything in it, so that a kept value cannot be changed by a reader. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}
