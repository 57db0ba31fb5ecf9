import { DomainError } from './errors';

/** A payload as read, with its size in bytes of JSON. */
export interface PayloadRead<P> {
  payload: P;
  bytes: number;
}

/**
 * The payloads a dispatcher holds for the messages it has read ahead of their attempts, within a
 * budget of bytes.
 *
 * - An event's payload is held once, however many of its messages hold it, and counts against
 *   the budget until the last of them lets go (`release`).
 * - A message whose event's payload is held shares it, whatever the budget.
 * - A payload not yet held is held only while the payloads held and it stay within the budget;
 *   otherwise the message goes without it, and its payload is to be read again when its attempt
 *   is about to start (bounded by the attempts in flight, not by the read-ahead).
 *
 * Pure bookkeeping: no reads, no timers.
 */
export class PayloadBudget<P> {
  private readonly held = new Map<string, { read: PayloadRead<P>; holders: number }>();
  private total = 0;

  constructor(readonly budgetBytes: number) {
    if (!Number.isInteger(budgetBytes) || budgetBytes < 0)
      throw new DomainError(
        'INTERNAL',
        `budget must be a whole number of bytes, got ${budgetBytes}`,
      );
  }

  /** Bytes held now. */
  get heldBytes(): number {
    return this.total;
  }

  /** Events whose payloads are held now. */
  get heldEvents(): number {
    return this.held.size;
  }

  /** Bytes a payload not yet held may take now. */
  room(): number {
    return Math.max(0, this.budgetBytes - this.total);
  }

  /** Whether the event's payload is held (a message of it would share it). */
  holds(eventId: string): boolean {
    return this.held.has(eventId);
  }

  /**
   * One message of `eventId` takes its event's payload: the one held, or `read` when it fits the
   * budget. Undefined when the message goes without (nothing held, and `read` absent or too
   * large); then it has nothing to release.
   */
  hold(eventId: string, read?: PayloadRead<P>): P | undefined {
    const entry = this.held.get(eventId);
    if (entry) {
      entry.holders++;
      return entry.read.payload;
    }
    if (read === undefined || this.total + read.bytes > this.budgetBytes) return undefined;
    this.held.set(eventId, { read, holders: 1 });
    this.total += read.bytes;
    return read.payload;
  }

  /** A message that took its event's payload with `hold` lets go of it. */
  release(eventId: string): void {
    const entry = this.held.get(eventId);
    if (entry === undefined)
      throw new DomainError('INTERNAL', `no payload of event ${eventId} is held`);
    if (--entry.holders > 0) return;
    this.held.delete(eventId);
    this.total -= entry.read.bytes;
  }
}
