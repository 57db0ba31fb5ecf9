/**
 * The bench's own account of every event and message, filled in by the publisher (scheduled,
 * sent, accepted/refused/failed), the receiver (each attempt) and the DLQ watcher (dead letters).
 * Counts are exact and never come from Hookbase's metrics, so published = delivered +
 * dead-lettered + missing is a real check: the three terms come from different sources, and
 * anything delivered or dead-lettered that was never published breaks it.
 */

/** Messages are keyed by event sequence number and endpoint index, packed into one number. */
const ENDPOINT_BITS = 2 ** 20;
const key = (seq: number, endpoint: number) => seq * ENDPOINT_BITS + endpoint;

export type EventOutcome = 'scheduled' | 'sent' | 'accepted' | 'refused' | 'failed';

export interface EventEntry {
  seq: number;
  scheduledAt: number;
  sentAt: number;
  answeredAt: number;
  eventId?: string;
  outcome: EventOutcome;
  detail?: string;
  /** Endpoint indexes the event is addressed to (shared between events, never copied). */
  targets: ReadonlySet<number>;
}

interface MessageEntry {
  seq: number;
  endpoint: number;
  deliveredAt: number;
  attempts: number;
  deliveries: number;
}

export type DeliveryTiming = Pick<EventEntry, 'scheduledAt' | 'sentAt'> &
  Omit<MessageEntry, 'deliveries'>;

/** published = delivered + deadLettered + missing, checked; `problems` say why a run is void. */
export type Reconciliation = ReturnType<Ledger['reconcile']>;

/** Where the receiver and the DLQ watcher write: a ledger, or something routing to several. */
export interface LedgerSink {
  attempt(seq: number, endpoint: number, at: number, ok: boolean): void;
  deadLettered(eventId: string, endpoint: number): void;
}

/** Sequence numbers come in blocks: ledger k of a block router owns block `first + k`. */
export const SEQ_BLOCK = 10_000_000;

/** The block a sequence number belongs to (negative numbers, a warm-up's, belong to none). */
export const blockOf = (seq: number) => (seq < 0 ? -1 : Math.floor(seq / SEQ_BLOCK));

/**
 * Runs (or steps) that deliver to the same endpoints: each attempt counts in the ledger that owns
 * its sequence number's block, each dead letter in the ledger that knows its event.
 */
export function blockRouter(ledgers: readonly Ledger[], first = 0): LedgerSink {
  return {
    attempt: (seq, endpoint, at, ok) =>
      ledgers[blockOf(seq) - first]?.attempt(seq, endpoint, at, ok),
    deadLettered: (eventId, endpoint) =>
      (ledgers.find((l) => l.knowsEvent(eventId)) ?? ledgers.at(-1))?.deadLettered(
        eventId,
        endpoint,
      ),
  };
}

export class Ledger implements LedgerSink {
  private readonly events = new Map<number, EventEntry>();
  private readonly messages = new Map<number, MessageEntry>();
  private readonly byEventId = new Map<string, number>();
  private readonly deadLetters = new Map<string, Set<number>>();
  private readonly laneArrivals = new Map<number, number[]>();
  private readonly counts = {
    scheduled: 0,
    sent: 0,
    accepted: 0,
    refused: 0,
    failed: 0,
    expected: 0,
    delivered: 0,
    deadLettered: 0,
    attempts: 0,
  };

  constructor(
    readonly name: string,
    private readonly options: { trackOrder?: boolean } = {},
  ) {}

  schedule(seq: number, scheduledAt: number, targets: ReadonlySet<number>): void {
    if (this.events.has(seq)) throw new Error(`event ${seq} scheduled twice`);
    for (const endpoint of targets)
      if (!Number.isInteger(endpoint) || endpoint < 0 || endpoint >= ENDPOINT_BITS)
        throw new Error(`endpoint index ${endpoint} out of range`);
    const outcome = 'scheduled';
    this.events.set(seq, { seq, scheduledAt, targets, sentAt: NaN, answeredAt: NaN, outcome });
    this.counts.scheduled++;
  }

  sent(seq: number, at: number): void {
    const event = this.events.get(seq);
    if (!event) throw new Error(`event ${seq} was never scheduled`);
    event.sentAt = at;
    event.outcome = 'sent';
    this.counts.sent++;
  }

  accepted(seq: number, at: number, eventId: string): void {
    const event = this.answer(seq, at, 'accepted', undefined);
    event.eventId = eventId;
    this.byEventId.set(eventId, seq);
    this.counts.expected += event.targets.size;
  }

  refused(seq: number, at: number, detail: string): void {
    this.answer(seq, at, 'refused', detail);
  }

  failed(seq: number, at: number, detail: string): void {
    this.answer(seq, at, 'failed', detail);
  }

  /** One request at the receiver for (event, endpoint); `ok` when the receiver answered 2xx. */
  attempt(seq: number, endpoint: number, at: number, ok: boolean): void {
    let message = this.messages.get(key(seq, endpoint));
    if (!message) {
      message = { seq, endpoint, deliveredAt: NaN, attempts: 0, deliveries: 0 };
      this.messages.set(key(seq, endpoint), message);
    }
    message.attempts++;
    this.counts.attempts++;
    if (!ok || ++message.deliveries > 1) return;
    message.deliveredAt = at;
    this.counts.delivered++;
    if (!this.options.trackOrder) return;
    const lane = this.laneArrivals.get(endpoint) ?? [];
    this.laneArrivals.set(endpoint, lane);
    lane.push(seq);
  }

  /** A record read from the DLQ topic (Hookbase's event id, the bench's endpoint index). */
  deadLettered(eventId: string, endpoint: number): void {
    const endpoints = this.deadLetters.get(eventId) ?? new Set<number>();
    this.deadLetters.set(eventId, endpoints);
    if (endpoints.has(endpoint)) return;
    endpoints.add(endpoint);
    this.counts.deadLettered++;
  }

  knowsEvent(eventId: string): boolean {
    return this.byEventId.has(eventId);
  }

  get progress() {
    return { ...this.counts };
  }

  /**
   * Every publish answered, and every published message delivered or dead-lettered: the cheap
   * counts first, then the full reconciliation (counts alone could be fooled by strays).
   */
  isSettled(): boolean {
    const c = this.counts;
    if (c.accepted + c.refused + c.failed < c.sent) return false;
    if (c.delivered + c.deadLettered < c.expected) return false;
    return this.reconcile().messages.missing === 0;
  }

  private isPublished(seq: number, endpoint: number): boolean {
    const event = this.events.get(seq);
    return event?.outcome === 'accepted' && event.targets.has(endpoint);
  }

  private isDeadLettered(seq: number, endpoint: number): boolean {
    const eventId = this.events.get(seq)?.eventId;
    return eventId !== undefined && (this.deadLetters.get(eventId)?.has(endpoint) ?? false);
  }

  reconcile() {
    const events = { scheduled: 0, sent: 0, accepted: 0, refused: 0, failed: 0, unanswered: 0 };
    const m = {
      published: 0,
      delivered: 0,
      deadLettered: 0,
      missing: 0,
      duplicates: 0,
      unexpected: 0,
      deliveredAndDeadLettered: 0,
      attempts: 0,
      failedAttempts: 0,
    };
    const refusals: Record<string, number> = {};
    for (const event of this.events.values()) {
      events.scheduled++;
      if (event.outcome !== 'scheduled') events.sent++;
      if (event.outcome === 'sent') events.unanswered++;
      else if (event.outcome === 'refused' || event.outcome === 'failed') {
        events[event.outcome]++;
        const reason = event.detail ?? event.outcome;
        refusals[reason] = (refusals[reason] ?? 0) + 1;
      } else if (event.outcome === 'accepted') {
        events.accepted++;
        for (const endpoint of event.targets) {
          m.published++;
          const delivered = (this.messages.get(key(event.seq, endpoint))?.deliveries ?? 0) > 0;
          if (!delivered && !this.isDeadLettered(event.seq, endpoint)) m.missing++;
        }
      }
    }
    for (const message of this.messages.values()) {
      m.attempts += message.attempts;
      m.failedAttempts += message.attempts - message.deliveries;
      if (!this.isPublished(message.seq, message.endpoint)) m.unexpected++;
      if (message.deliveries === 0) continue;
      m.delivered++;
      m.duplicates += message.deliveries - 1;
      if (this.isDeadLettered(message.seq, message.endpoint)) m.deliveredAndDeadLettered++;
    }
    for (const [eventId, endpoints] of this.deadLetters) {
      const seq = this.byEventId.get(eventId);
      for (const endpoint of endpoints) {
        const message = seq === undefined ? undefined : this.messages.get(key(seq, endpoint));
        // A message the receiver saw was already judged (and counted) in the loop above.
        if (!message && (seq === undefined || !this.isPublished(seq, endpoint))) m.unexpected++;
        if ((message?.deliveries ?? 0) === 0) m.deadLettered++;
      }
    }
    const balanced = m.published === m.delivered + m.deadLettered + m.missing;
    const problems: string[] = [];
    const strays = `${m.unexpected} messages seen that were never published to that endpoint`;
    if (!balanced)
      problems.push(
        `ledger does not balance: published ${m.published} ≠ delivered ${m.delivered} + dead-lettered ${m.deadLettered} + missing ${m.missing}${m.unexpected > 0 ? ` (${strays})` : ''}`,
      );
    else if (m.unexpected > 0) problems.push(strays);
    if (m.missing > 0)
      problems.push(`${m.missing} published messages were neither delivered nor dead-lettered`);
    if (events.unanswered > 0) problems.push(`${events.unanswered} publishes were never answered`);
    return { events, messages: m, balanced, problems, refusals };
  }

  /** Timings of every published message delivered at least once (first success). */
  deliveries(): DeliveryTiming[] {
    const timings: DeliveryTiming[] = [];
    for (const { seq, endpoint, deliveries, deliveredAt, attempts } of this.messages.values()) {
      const event = this.events.get(seq);
      if (deliveries === 0 || !event || !this.isPublished(seq, endpoint)) continue;
      const { scheduledAt, sentAt } = event;
      timings.push({ seq, endpoint, scheduledAt, sentAt, deliveredAt, attempts });
    }
    return timings;
  }

  allEvents(): readonly EventEntry[] {
    return [...this.events.values()];
  }

  /** Per endpoint, the event sequence numbers in the order of their first successful delivery. */
  arrivals(): ReadonlyMap<number, readonly number[]> {
    return this.laneArrivals;
  }

  private answer(seq: number, at: number, outcome: EventOutcome, detail: string | undefined) {
    const event = this.events.get(seq);
    if (event?.outcome !== 'sent') throw new Error(`event ${seq} answered twice or never sent`);
    event.answeredAt = at;
    event.outcome = outcome;
    event.detail = detail;
    this.counts[outcome as 'accepted' | 'refused' | 'failed']++;
    return event;
  }
}
