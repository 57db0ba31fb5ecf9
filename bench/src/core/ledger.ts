/**
 * The bench's own account of every event and message, filled in by the publisher (scheduled,
 * sent, accepted/refused/failed), the receiver (each attempt, first success) and the DLQ watcher
 * (dead letters). Counts are exact and come from here, never from Hookbase's metrics, so the
 * reconciliation published = delivered + dead-lettered + missing is a real check: the three
 * terms are counted from different sources, and anything delivered or dead-lettered that was
 * never published (or published twice) breaks it.
 */

/** Messages are keyed by event sequence number and endpoint index, packed into one number. */
const ENDPOINT_BITS = 2 ** 20;

export type EventOutcome = 'scheduled' | 'sent' | 'accepted' | 'refused' | 'failed';

export interface EventEntry {
  seq: number;
  /** A grouping of the caller's (ingest-rest's step number); 0 by default. */
  tag: number;
  scheduledAt: number;
  sentAt: number;
  answeredAt: number;
  eventId: string | undefined;
  outcome: EventOutcome;
  detail: string | undefined;
  /** Endpoint indexes the event is addressed to (shared between events, never copied). */
  targets: ReadonlySet<number>;
}

interface MessageEntry {
  seq: number;
  endpoint: number;
  firstAttemptAt: number;
  deliveredAt: number;
  attempts: number;
  deliveries: number;
}

export interface DeliveryTiming {
  seq: number;
  endpoint: number;
  tag: number;
  scheduledAt: number;
  sentAt: number;
  acceptedAt: number;
  firstAttemptAt: number;
  deliveredAt: number;
  attempts: number;
}

export interface Reconciliation {
  events: {
    scheduled: number;
    sent: number;
    accepted: number;
    refused: number;
    /** The publish failed on the client side (connection error, timeout): outcome unknown. */
    failed: number;
    /** Sent but never answered by the time the run ended. */
    unanswered: number;
  };
  messages: {
    published: number;
    delivered: number;
    deadLettered: number;
    missing: number;
    duplicates: number;
    /** Delivered or dead-lettered although never published (or not to that endpoint). */
    unexpected: number;
    deliveredAndDeadLettered: number;
    attempts: number;
    failedAttempts: number;
  };
  /** published = delivered + deadLettered + missing. */
  balanced: boolean;
  /** Human-readable reasons a run is void, empty when it is not. */
  problems: string[];
  refusals: Record<string, number>;
}

export interface LedgerProgress {
  scheduled: number;
  sent: number;
  accepted: number;
  refused: number;
  failed: number;
  expected: number;
  delivered: number;
  deadLettered: number;
  attempts: number;
}

/** Where the receiver and the DLQ watcher write: a ledger, or something routing to several. */
export interface LedgerSink {
  attempt(seq: number, endpoint: number, at: number, ok: boolean): void;
  deadLettered(eventId: string, endpoint: number): void;
}

/** Sequence numbers come in blocks: ledger k of a block router owns block `first + k`. */
export const SEQ_BLOCK = 10_000_000;

/** The block a sequence number belongs to (negative numbers, a warm-up's, belong to none). */
export function blockOf(seq: number): number {
  return seq < 0 ? -1 : Math.floor(seq / SEQ_BLOCK);
}

/**
 * Runs (or steps) that deliver to the same endpoints: each attempt counts in the ledger that owns
 * its sequence number's block, each dead letter in the ledger that knows its event.
 */
export function blockRouter(ledgers: readonly Ledger[], first = 0): LedgerSink {
  return {
    attempt: (seq, endpoint, at, ok) =>
      ledgers[blockOf(seq) - first]?.attempt(seq, endpoint, at, ok),
    deadLettered: (eventId, endpoint) =>
      (
        ledgers.find((ledger) => ledger.knowsEvent(eventId)) ?? ledgers[ledgers.length - 1]
      ).deadLettered(eventId, endpoint),
  };
}

function messageKey(seq: number, endpoint: number): number {
  return seq * ENDPOINT_BITS + endpoint;
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

  schedule(seq: number, scheduledAt: number, targets: ReadonlySet<number>, tag = 0): void {
    if (this.events.has(seq)) throw new Error(`event ${seq} scheduled twice`);
    for (const endpoint of targets) {
      if (!Number.isInteger(endpoint) || endpoint < 0 || endpoint >= ENDPOINT_BITS)
        throw new Error(`endpoint index ${endpoint} out of range`);
    }
    this.events.set(seq, {
      seq,
      tag,
      scheduledAt,
      sentAt: Number.NaN,
      answeredAt: Number.NaN,
      eventId: undefined,
      outcome: 'scheduled',
      detail: undefined,
      targets,
    });
    this.counts.scheduled++;
  }

  sent(seq: number, at: number): void {
    const event = this.event(seq);
    event.sentAt = at;
    event.outcome = 'sent';
    this.counts.sent++;
  }

  accepted(seq: number, at: number, eventId: string): void {
    const event = this.answer(seq, at, 'accepted');
    event.eventId = eventId;
    this.byEventId.set(eventId, seq);
    this.counts.accepted++;
    this.counts.expected += event.targets.size;
  }

  refused(seq: number, at: number, detail: string): void {
    this.answer(seq, at, 'refused').detail = detail;
    this.counts.refused++;
  }

  failed(seq: number, at: number, detail: string): void {
    this.answer(seq, at, 'failed').detail = detail;
    this.counts.failed++;
  }

  /** One request at the receiver for (event, endpoint); `ok` when the receiver answered 2xx. */
  attempt(seq: number, endpoint: number, at: number, ok: boolean): void {
    const key = messageKey(seq, endpoint);
    let message = this.messages.get(key);
    if (!message) {
      message = {
        seq,
        endpoint,
        firstAttemptAt: at,
        deliveredAt: Number.NaN,
        attempts: 0,
        deliveries: 0,
      };
      this.messages.set(key, message);
    }
    message.attempts++;
    this.counts.attempts++;
    if (!ok) return;
    message.deliveries++;
    if (message.deliveries === 1) {
      message.deliveredAt = at;
      this.counts.delivered++;
      if (this.options.trackOrder) {
        let lane = this.laneArrivals.get(endpoint);
        if (!lane) this.laneArrivals.set(endpoint, (lane = []));
        lane.push(seq);
      }
    }
  }

  /** A record read from the DLQ topic (Hookbase's event id, the bench's endpoint index). */
  deadLettered(eventId: string, endpoint: number): void {
    let endpoints = this.deadLetters.get(eventId);
    if (!endpoints) this.deadLetters.set(eventId, (endpoints = new Set()));
    if (endpoints.has(endpoint)) return;
    endpoints.add(endpoint);
    this.counts.deadLettered++;
  }

  knowsEvent(eventId: string): boolean {
    return this.byEventId.has(eventId);
  }

  get progress(): LedgerProgress {
    return { ...this.counts };
  }

  /**
   * Every publish answered, and every published message delivered or dead-lettered. The cheap
   * count comparison comes first; the full reconciliation confirms it (counts alone could be
   * fooled by unexpected deliveries).
   */
  isSettled(): boolean {
    const c = this.counts;
    if (c.accepted + c.refused + c.failed < c.sent) return false;
    if (c.delivered + c.deadLettered < c.expected) return false;
    return this.reconcile().messages.missing === 0;
  }

  private isPublished(seq: number, endpoint: number): boolean {
    const event = this.events.get(seq);
    return event !== undefined && event.outcome === 'accepted' && event.targets.has(endpoint);
  }

  private isDeadLettered(seq: number, endpoint: number): boolean {
    const eventId = this.events.get(seq)?.eventId;
    return eventId !== undefined && (this.deadLetters.get(eventId)?.has(endpoint) ?? false);
  }

  reconcile(): Reconciliation {
    const events = { scheduled: 0, sent: 0, accepted: 0, refused: 0, failed: 0, unanswered: 0 };
    const refusals: Record<string, number> = {};
    let published = 0;
    let missing = 0;
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
          published++;
          const delivered =
            (this.messages.get(messageKey(event.seq, endpoint))?.deliveries ?? 0) > 0;
          if (!delivered && !this.isDeadLettered(event.seq, endpoint)) missing++;
        }
      }
    }

    let delivered = 0;
    let duplicates = 0;
    let unexpected = 0;
    let deliveredAndDeadLettered = 0;
    let attempts = 0;
    let failedAttempts = 0;
    for (const message of this.messages.values()) {
      attempts += message.attempts;
      failedAttempts += message.attempts - message.deliveries;
      if (message.deliveries === 0) {
        if (!this.isPublished(message.seq, message.endpoint)) unexpected++;
        continue;
      }
      delivered++;
      duplicates += message.deliveries - 1;
      if (!this.isPublished(message.seq, message.endpoint)) unexpected++;
      if (this.isDeadLettered(message.seq, message.endpoint)) deliveredAndDeadLettered++;
    }

    let deadLettered = 0;
    for (const [eventId, endpoints] of this.deadLetters) {
      const seq = this.byEventId.get(eventId);
      for (const endpoint of endpoints) {
        const known = seq !== undefined && this.isPublished(seq, endpoint);
        const message =
          seq === undefined ? undefined : this.messages.get(messageKey(seq, endpoint));
        // A message the receiver saw was already judged (and counted) in the loop above.
        if (!known && !message) unexpected++;
        if ((message?.deliveries ?? 0) === 0) deadLettered++;
      }
    }

    const balanced = published === delivered + deadLettered + missing;
    const problems: string[] = [];
    if (!balanced) {
      problems.push(
        `ledger does not balance: published ${published} ≠ delivered ${delivered} + dead-lettered ${deadLettered} + missing ${missing}` +
          (unexpected > 0
            ? ` (${unexpected} messages seen that were never published to that endpoint)`
            : ''),
      );
    } else if (unexpected > 0) {
      problems.push(
        `${unexpected} requests for messages that were never published to that endpoint`,
      );
    }
    if (missing > 0)
      problems.push(`${missing} published messages were neither delivered nor dead-lettered`);
    if (events.unanswered > 0) problems.push(`${events.unanswered} publishes were never answered`);
    return {
      events,
      messages: {
        published,
        delivered,
        deadLettered,
        missing,
        duplicates,
        unexpected,
        deliveredAndDeadLettered,
        attempts,
        failedAttempts,
      },
      balanced,
      problems,
      refusals,
    };
  }

  /** Timings of every published message delivered at least once (first success). */
  deliveries(): DeliveryTiming[] {
    const timings: DeliveryTiming[] = [];
    for (const message of this.messages.values()) {
      if (message.deliveries === 0) continue;
      const event = this.events.get(message.seq);
      if (!event || !this.isPublished(message.seq, message.endpoint)) continue;
      timings.push({
        seq: message.seq,
        endpoint: message.endpoint,
        tag: event.tag,
        scheduledAt: event.scheduledAt,
        sentAt: event.sentAt,
        acceptedAt: event.answeredAt,
        firstAttemptAt: message.firstAttemptAt,
        deliveredAt: message.deliveredAt,
        attempts: message.attempts,
      });
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

  private event(seq: number): EventEntry {
    const event = this.events.get(seq);
    if (!event) throw new Error(`event ${seq} was never scheduled`);
    return event;
  }

  private answer(seq: number, at: number, outcome: EventOutcome): EventEntry {
    const event = this.event(seq);
    if (event.outcome !== 'sent') throw new Error(`event ${seq} answered twice or never sent`);
    event.answeredAt = at;
    event.outcome = outcome;
    return event;
  }
}
