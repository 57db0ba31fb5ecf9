import type { EndpointEntity } from '../entities';

/** A signing secret as kept: opened, and when it stops signing (null: it has not been retired). */
export interface KeptSecret {
  secret: string;
  expiresAt: number | null;
}

/** What the dispatcher keeps of an endpoint it read, at one configuration version (ADR 0040). */
export interface KeptEndpoint {
  /** The time the secrets were chosen at (those already retired then were not read). */
  readAt: number;
  /** Every column but the health columns, frozen: shared by every read that uses it. */
  columns: Readonly<Partial<EndpointEntity>>;
  /** Newest first, as they sign. */
  secrets: readonly KeptSecret[];
}

/** The secrets of a kept endpoint that sign at `at`, newest first. */
export function secretsSigningAt(kept: KeptEndpoint, at: number): string[] {
  const signing: string[] = [];
  for (const { secret, expiresAt } of kept.secrets) {
    if (expiresAt === null || expiresAt > at) signing.push(secret);
  }
  return signing;
}
