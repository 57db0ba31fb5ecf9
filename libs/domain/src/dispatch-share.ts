import { DomainError } from './errors';

/**
 * Who gets the dispatcher's next slot: the process-wide pool of attempts in flight, shared
 * fairly between organizations.
 *
 * - Every organization may hold up to `share` slots whenever one is free.
 * - Beyond its share an organization borrows: it takes a free slot only if more than `share`
 *   slots are free, so at least one whole share stays free for any other organization. Alone, an
 *   organization can hold `capacity - share` slots (or its share, if larger); attempts that hang
 *   until their timeout can never take the whole pool.
 * - When slots are short, requests wait: each organization's in arrival order, and a slot that
 *   comes free goes to the waiting organization holding the fewest (then to the one waiting
 *   longest), among those the rules above allow.
 *
 * Pure bookkeeping, no timers or promises: `request` says whether a slot was granted at once,
 * `release` returns the waiting tickets the freed slot let in, in grant order.
 */
export class DispatchShares<T> {
  private used = 0;
  private readonly holding = new Map<string, number>();
  /** Each organization's waiting tickets, in arrival order (TicketQueue). */
  private readonly waiting = new Map<string, TicketQueue<T>>();
  private arrivals = 0;

  constructor(
    readonly capacity: number,
    readonly share: number,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new DomainError('INTERNAL', `capacity must be a positive integer, got ${capacity}`);
    if (!Number.isInteger(share) || share < 1 || share > capacity)
      throw new DomainError('INTERNAL', `share must be an integer in 1..${capacity}, got ${share}`);
  }

  /**
   * A slot for `organizationId`: granted now (true), or `ticket` waits for one (false). A ticket
   * stands for one request: the same ticket never waits twice at once.
   */
  request(organizationId: string, ticket: T): boolean {
    const queue = this.waiting.get(organizationId);
    // Behind its own organization's earlier requests, never before them.
    if (!queue && this.allowed(organizationId)) {
      this.take(organizationId);
      return true;
    }
    if (queue?.has(ticket))
      throw new DomainError('INTERNAL', `this ticket already waits for ${organizationId}`);
    if (queue) queue.push(ticket, this.arrivals++);
    else this.waiting.set(organizationId, new TicketQueue(ticket, this.arrivals++));
    return false;
  }

  /** A slot held by `organizationId` is free again; returns the tickets it let in. */
  release(organizationId: string): T[] {
    const held = this.holding.get(organizationId) ?? 0;
    if (held === 0)
      throw new DomainError('INTERNAL', `organization ${organizationId} holds no dispatch slot`);
    if (held === 1) this.holding.delete(organizationId);
    else this.holding.set(organizationId, held - 1);
    this.used--;
    return this.grantWaiting();
  }

  /**
   * A waiting ticket gives up (it waited too long); returns whether it was still waiting. It lets
   * no one in: whoever waits is waiting for a slot to come free, not for a place in a queue.
   */
  withdraw(organizationId: string, ticket: T): boolean {
    const queue = this.waiting.get(organizationId);
    if (!queue?.withdraw(ticket)) return false;
    if (queue.size === 0) this.waiting.delete(organizationId);
    return true;
  }

  /** Slots in use, by everyone or by one organization. */
  inUse(organizationId?: string): number {
    return organizationId === undefined ? this.used : (this.holding.get(organizationId) ?? 0);
  }

  /** Requests waiting, by everyone or by one organization. */
  waitingCount(organizationId?: string): number {
    if (organizationId !== undefined) return this.waiting.get(organizationId)?.size ?? 0;
    let count = 0;
    for (const queue of this.waiting.values()) count += queue.size;
    return count;
  }

  private allowed(organizationId: string): boolean {
    const free = this.capacity - this.used;
    if (free === 0) return false;
    return this.inUse(organizationId) < this.share || free > this.share;
  }

  private take(organizationId: string): void {
    this.holding.set(organizationId, this.inUse(organizationId) + 1);
    this.used++;
  }

  private grantWaiting(): T[] {
    const granted: T[] = [];
    for (;;) {
      let best: { organizationId: string; queue: TicketQueue<T>; held: number } | undefined;
      let bestSeq = 0;
      for (const [organizationId, queue] of this.waiting) {
        if (!this.allowed(organizationId)) continue;
        const held = this.inUse(organizationId);
        const seq = queue.firstSeq();
        if (!best || held < best.held || (held === best.held && seq < bestSeq)) {
          best = { organizationId, queue, held };
          bestSeq = seq;
        }
      }
      if (!best) return granted;
      granted.push(best.queue.shift());
      if (best.queue.size === 0) this.waiting.delete(best.organizationId);
      this.take(best.organizationId);
    }
  }
}

interface QueuedTicket<T> {
  ticket: T;
  seq: number;
  waiting: boolean;
}

/**
 * One organization's waiting tickets in arrival order: the first found, taken and given up in
 * constant time. (A Map used as a queue is not: entries taken from its front leave holes that
 * every look at its first entry walks past until the Map is rebuilt, and at saturation thousands
 * wait and are granted one after another.) A ticket that gives up is only marked, and skipped
 * when it reaches the front.
 */
class TicketQueue<T> {
  private items: QueuedTicket<T>[] = [];
  private head = 0;
  private readonly byTicket = new Map<T, QueuedTicket<T>>();

  constructor(ticket: T, seq: number) {
    this.push(ticket, seq);
  }

  get size(): number {
    return this.byTicket.size;
  }

  has(ticket: T): boolean {
    return this.byTicket.has(ticket);
  }

  push(ticket: T, seq: number): void {
    const item = { ticket, seq, waiting: true };
    this.items.push(item);
    this.byTicket.set(ticket, item);
  }

  withdraw(ticket: T): boolean {
    const item = this.byTicket.get(ticket);
    if (!item) return false;
    item.waiting = false;
    this.byTicket.delete(ticket);
    // Tickets that gave up behind a front that does not move (the organization's slots all hang)
    // are dropped now and then, so that waiting and giving up for long keeps no more than it holds.
    if (this.items.length - this.head > 2 * this.byTicket.size + 1024) {
      this.items = this.items.slice(this.head).filter((queued) => queued.waiting);
      this.head = 0;
    }
    return true;
  }

  /** The arrival number of the first ticket still waiting (the queue is not empty). */
  firstSeq(): number {
    return this.front().seq;
  }

  /** Takes the first ticket still waiting (the queue is not empty). */
  shift(): T {
    const item = this.front();
    item.waiting = false;
    this.byTicket.delete(item.ticket);
    this.head++;
    return item.ticket;
  }

  private front(): QueuedTicket<T> {
    while (!this.items[this.head].waiting) this.head++;
    // Drops the taken front now and then, so the array does not grow with every ticket served.
    if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return this.items[this.head];
  }
}

/**
 * The slots an organization may always hold: `percent` of the pool, rounded down, at least one.
 */
export function organizationShareSlots(capacity: number, percent: number): number {
  return Math.max(1, Math.floor((capacity * percent) / 100));
}
