/** An idempotency key this process saw accepted, as a repeat needs it. */
export interface AcceptedKey {
  eventId: string;
  eventType: string;
  /** The event's acceptance time (ISO 8601). */
  acceptedAt: string;
  /** The first publish's fingerprint (type, payload, application): a repeat must match it. */
  fingerprint: string;
}

interface Remembered extends AcceptedKey {
  rememberedAt: number;
}

/**
 * The idempotency keys this ingest process saw accepted lately, in its memory: what a repeat of
 * one is answered from while PostgreSQL, where the keys are kept, cannot be reached. Bounded in
 * count (the oldest goes first) and in time: an entry older than `ttlMs` is not used, as its key
 * may have been pruned with its event since.
 */
export class AcceptedKeys {
  private readonly entries = new Map<string, Remembered>();

  constructor(
    private readonly max = 100_000,
    private readonly ttlMs = 3_600_000,
  ) {}

  remember(organizationId: string, key: string, accepted: AcceptedKey, now = Date.now()): void {
    const id = keyOf(organizationId, key);
    this.entries.delete(id);
    this.entries.set(id, { ...accepted, rememberedAt: now });
    if (this.entries.size > this.max) {
      this.entries.delete(this.entries.keys().next().value!);
    }
  }

  recall(organizationId: string, key: string, now = Date.now()): AcceptedKey | undefined {
    const entry = this.entries.get(keyOf(organizationId, key));
    if (!entry || now - entry.rememberedAt > this.ttlMs) return undefined;
    return {
      eventId: entry.eventId,
      eventType: entry.eventType,
      acceptedAt: entry.acceptedAt,
      fingerprint: entry.fingerprint,
    };
  }

  get size(): number {
    return this.entries.size;
  }
}

function keyOf(organizationId: string, key: string): string {
  return `${organizationId}\u0000${key}`;
}
