import { Inject, Injectable, Logger } from '@nestjs/common';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import { GroupedWork, nextDeliveryStep, refusedDeliveryStep } from '@hookbase/domain';
import {
  EndpointEntity,
  EndpointRepository,
  type EndpointVersion,
  MessageRepository,
} from '@hookbase/persistence';
import { AttemptResultOf, Attempts, AttemptService } from './attempt.service';
import { DeadLetters, DeadLetterService } from './dead-letter.service';
import { DeliveryGuards, EndpointGuards } from './endpoint-guards';
import { EventPayloads, PayloadReads } from './event-payloads';
import { PendingDelivery, ReadyDelivery } from './pending-delivery';
import { RecentEndpointReads } from './recent-endpoint-reads';
import { AttemptMarks, StreamAttemptMarks } from './stream-attempt-marks';

export type { PendingDelivery } from './pending-delivery';

/**
 * An endpoint read older than this when a message's attempt is about to start (the message
 * waited for a slot meanwhile) is read again, so that changes take effect at the next attempt.
 */
const FRESH_READ_MS = 250;

/** Endpoints (deleted ones included) and their signing secrets, as read at `at`. */
export interface EndpointReads {
  endpoints: ReadonlyMap<string, EndpointEntity>;
  secrets: ReadonlyMap<string, string[]>;
  at: Date;
}

/**
 * The unordered delivery path (messages of endpoints without FIFO ordering, and every retry, hold
 * and replay copy): reads the endpoints fresh, decides each message's step (`nextDeliveryStep`),
 * and sends the others through their endpoint's guards and one attempt each. A coordinator: the
 * guards, the attempt and dead-lettering are its collaborators.
 */
@Injectable()
export class DeliveryService {
  private readonly logger = new Logger(DeliveryService.name);
  /**
   * Messages the guards handed back (a slow endpoint's backlog, or no slot in their
   * organization's share): when many give up together, their holds go in one write.
   */
  private readonly guardHolds: GroupedWork<{ messageId: string; until: Date }, void>;
  /** Endpoints read again before an attempt: the reads asked for together go in one. */
  private readonly freshReads: GroupedWork<string, EndpointReads>;
  /** The newest read of each endpoint, by any path, within FRESH_READ_MS. */
  private readonly recentReads = new RecentEndpointReads<EndpointReads>(FRESH_READ_MS);

  constructor(
    @Inject(HOOKBASE_CONFIG) private readonly config: HookbaseConfig,
    private readonly endpoints: EndpointRepository,
    private readonly messages: MessageRepository,
    /** Payloads of messages that waited without theirs (over the read-ahead's budget). */
    @Inject(EventPayloads) private readonly payloads: PayloadReads,
    @Inject(EndpointGuards) private readonly guards: DeliveryGuards,
    @Inject(AttemptService) private readonly attempts: Attempts,
    @Inject(DeadLetterService) private readonly deadLetters: DeadLetters,
    @Inject(StreamAttemptMarks) private readonly marks: AttemptMarks,
  ) {
    this.guardHolds = new GroupedWork<{ messageId: string; until: Date }, void>(async (holds) => {
      await this.messages.holdEach(holds);
      return holds.map(() => undefined);
    });
    this.freshReads = new GroupedWork<string, EndpointReads>(async (endpointIds) => {
      const read = await this.readEndpoints(endpointIds);
      return endpointIds.map(() => read);
    });
  }

  /** Holds a message the guards handed back until `until`, without an attempt. */
  private readonly holdForGuards = (delivery: PendingDelivery, until: Date): Promise<unknown> =>
    this.guardHolds.run([{ messageId: delivery.messageId, until }]);

  /**
   * Delivers a group of messages. Throws only when the management store cannot be read, before
   * any attempt: the caller retries the group later and no attempt is used up.
   */
  async deliver(deliveries: readonly PendingDelivery[]): Promise<void> {
    const sends = await this.start(deliveries);
    await Promise.all(sends.values());
  }

  /**
   * The endpoints and their signing secrets, read now: with `versions` (the configuration
   * versions and health the caller read in a statement of its own, started at `versionsAt`), only
   * those that changed. A caller that knows which endpoints it will deliver to can start this
   * early and hand it to `start`. Every read is kept for the messages of its endpoints that wait
   * for a slot meanwhile (`sendOne`).
   */
  async readEndpoints(
    endpointIds: readonly string[],
    versions?: readonly EndpointVersion[],
    versionsAt?: Date,
  ): Promise<EndpointReads> {
    const asked = new Date();
    const ids = [...new Set(endpointIds)];
    const { endpoints, secrets } = await this.endpoints.forDelivery(ids, asked, versions);
    // The state it shows is as recent as the statement that read the versions, no more.
    const read = { endpoints, secrets, at: (versions && versionsAt) || asked };
    this.recentReads.note(ids, read);
    return read;
  }

  /**
   * Reads the endpoints fresh (or takes `read`, started earlier by the caller for at least these
   * messages' endpoints), settles the messages that cannot go now (deleted endpoint, held,
   * expired) and starts the others' attempts, returning each started send by message id. Throws
   * (before any attempt) when the management store cannot be read.
   */
  async start(
    deliveries: readonly PendingDelivery[],
    read?: Promise<EndpointReads>,
  ): Promise<Map<string, Promise<void>>> {
    const sends = new Map<string, Promise<void>>();
    if (deliveries.length === 0) return sends;
    const reads = await (read ?? this.readEndpoints(deliveries.map((d) => d.endpointId)));
    const { endpoints: byId, at: now } = reads;

    const ready = await this.sendable(deliveries, byId, now);
    // A retry's claim is marked in flight before its attempt; a message on the stream is shown so
    // only once its attempt takes a while (StreamAttemptMarks), so that no write comes first.
    await this.messages.claimForAttempt(
      ready.filter((d) => d.source === 'scheduled').map((d) => d.messageId),
    );
    for (const delivery of ready) {
      // Bounded concurrency per endpoint, then a slot of the organization's share of the
      // process's pool, so neither one busy endpoint nor one organization's hanging endpoints can
      // take all; a message that waits too long behind its endpoint's own attempts, or finds no
      // slot in its organization's share in time, is held.
      const send = this.guards.withinConcurrency(
        delivery,
        () => this.sendOne(delivery, reads),
        this.holdForGuards,
      );
      // The caller handles failures; this only keeps an early one from counting as unhandled.
      send.catch(() => undefined);
      sends.set(delivery.messageId, send);
    }
    return sends;
  }

  /**
   * Settles the messages that cannot go now by their endpoints as read at `now`
   * (`nextDeliveryStep`): a deleted endpoint's are cancelled and an expired one's expire, both
   * into the DLQ; a paused or disabled endpoint's are held. Returns the others, to send.
   */
  private async sendable(
    deliveries: readonly PendingDelivery[],
    byId: ReadonlyMap<string, EndpointEntity>,
    now: Date,
  ): Promise<PendingDelivery[]> {
    const cancelled: PendingDelivery[] = [];
    const held: PendingDelivery[] = [];
    const expired: PendingDelivery[] = [];
    const ready: PendingDelivery[] = [];
    for (const delivery of deliveries) {
      const step = nextDeliveryStep(byId.get(delivery.endpointId), delivery.acceptedAt, now);
      switch (step.action) {
        case 'dead-letter':
          (step.status === 'cancelled' ? cancelled : expired).push(delivery);
          break;
        case 'hold':
          held.push(delivery);
          break;
        case 'send':
          ready.push(delivery);
          break;
        default: {
          const unreachable: never = step;
          throw new Error(`unknown delivery step ${JSON.stringify(unreachable)}`);
        }
      }
    }
    await this.deadLetters.deadLetter(cancelled, 'endpoint_deleted', 'cancelled');
    await this.deadLetters.deadLetter(expired, 'max_age', 'expired');
    await this.messages.hold(
      held.map((d) => d.messageId),
      new Date(now.getTime() + this.config.delivery.holdRecheckMs),
    );
    return ready;
  }

  /**
   * One message through the endpoint's guards (circuit breaker, then rate limit), then the
   * attempt. A message that may not go now is held on the retry schedule without using an
   * attempt; a new message meeting an open circuit is skipped into the DLQ (circuit_open). When
   * the endpoint's read is older than FRESH_READ_MS (the message waited for its slot), the
   * message goes by a newer read of its endpoint, one made within FRESH_READ_MS for other messages
   * or read now: a pause, a delete, a new URL or secret take effect at the next attempt, not at
   * the next read.
   */
  private async sendOne(delivery: PendingDelivery, read: EndpointReads) {
    let { endpoints, secrets } = read;
    if (Date.now() - read.at.getTime() > FRESH_READ_MS) {
      const fresh =
        this.recentReads.newest(delivery.endpointId) ??
        (await this.freshReads.run([delivery.endpointId]))[0];
      ({ endpoints, secrets } = fresh);
      if ((await this.sendable([delivery], endpoints, fresh.at)).length === 0) return;
    }
    const ready = await this.withPayload(delivery);
    if (ready === undefined) return;
    const endpoint = endpoints.get(delivery.endpointId)!;
    const admission = await this.guards.admit(endpoint);
    if (admission !== true) {
      const step = refusedDeliveryStep(delivery.source, admission.reason);
      if (step.action === 'dead-letter') {
        return this.deadLetters.deadLetter([delivery], step.reason, step.status);
      }
      await this.messages.hold([delivery.messageId], admission.until);
      return;
    }
    const ended =
      delivery.source === 'new'
        ? this.marks.begin(delivery.messageId, delivery.attemptsMade)
        : undefined;
    let outcome: AttemptResultOf['outcome'];
    try {
      ({ outcome } = await this.attempts.attempt(
        ready,
        endpoint,
        secrets.get(delivery.endpointId) ?? [],
      ));
    } finally {
      ended?.();
    }
    this.guards.afterAttempt(endpoint.id, outcome);
  }

  /**
   * The message with its payload: as it came, or read from the event now (it waited without it).
   * Undefined when the event's payload is gone meanwhile: purged, which ended the message, or the
   * event pruned with its messages.
   */
  private async withPayload(delivery: PendingDelivery): Promise<ReadyDelivery | undefined> {
    if (hasPayload(delivery)) return delivery;
    const payload = await this.payloads.read(delivery.eventId);
    if (payload === undefined) {
      this.logger.warn(
        `message ${delivery.messageId}: the payload of event ${delivery.eventId} is no longer stored`,
      );
      return undefined;
    }
    return { ...delivery, payload };
  }
}

function hasPayload(delivery: PendingDelivery): delivery is ReadyDelivery {
  return delivery.payload !== undefined;
}
