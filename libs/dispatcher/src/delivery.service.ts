import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import {
  circuitAfterAttempt,
  circuitGate,
  CircuitPolicy,
  CircuitState,
  CLOSED,
  decideAfterAttempt,
  DEFAULT_RETRY_POLICY,
  DeliveryDecision,
  DlqReason,
  DlqRecord,
  GroupedWork,
  HostIdentityGrant,
  takeToken,
  TokenBucket,
} from '@hookbase/domain';
import {
  DeliveryReport,
  DestinationAdapter,
  hasStoredCredentials,
  isCloudDestinationKind,
} from '@hookbase/destinations';
import { KafkaProducer, TOPICS, TopicNames } from '@hookbase/kafka';
import {
  AttemptRecord,
  EndpointEntity,
  EndpointRepository,
  MessageRepository,
  OrganizationRepository,
} from '@hookbase/persistence';
import { AttemptRecorder } from './attempt-recorder';
import { ConcurrencyLimit } from './concurrency-limit';
import { DESTINATION_REGISTRY, DispatcherDestinations } from './destination-registry.provider';
import { DISPATCH_SLOTS, DispatchSlots } from './dispatch-pool';

/** Rate-limit waits up to this long happen in line; longer ones hold the message instead. */
const MAX_INLINE_RATE_WAIT_MS = 1_000;
/**
 * A message whose organization holds its whole share of the dispatch pool waits up to this long
 * for a slot in line, then is held on the retry schedule for SHARE_HOLD_MS (no attempt used), so
 * it neither fills its partition's window nor holds the partition's committed offset meanwhile.
 */
const MAX_SHARE_WAIT_MS = 1_000;
const SHARE_HOLD_MS = 1_000;

/** A message ready for its next attempt, from the deliveries topic or the retry schedule. */
export interface PendingDelivery {
  messageId: string;
  webhookId: string;
  /** `new`: first seen on the deliveries topic; `scheduled`: a retry, hold or replay copy. */
  source: 'new' | 'scheduled';
  eventId: string;
  organizationId: string;
  endpointId: string;
  eventType: string;
  payload: Record<string, unknown>;
  acceptedAt: Date;
  attemptsMade: number;
}

/**
 * The delivery pipeline for non-FIFO messages: read the endpoint fresh, make the attempt through
 * the endpoint kind's adapter, decide (succeeded / retry later / dead-letter), record.
 */
@Injectable()
export class DeliveryService implements OnApplicationShutdown {
  private readonly logger = new Logger(DeliveryService.name);
  private readonly perEndpoint = new Map<string, { limit: ConcurrencyLimit; users: number }>();
  // Owned by this dispatcher: the endpoints keyed to its partitions (and what its retry loop claims).
  private readonly circuits = new Map<string, CircuitState>();
  private readonly buckets = new Map<string, TokenBucket>();
  private readonly circuitPolicy: CircuitPolicy;
  /**
   * Messages held for want of a slot in their organization's share: when a hanging organization's
   * waiters give up together, their holds go in one write instead of one each.
   */
  private readonly shareHolds: GroupedWork<string, void>;

  constructor(
    @Inject(HOOKBASE_CONFIG) private readonly config: HookbaseConfig,
    @Inject(TOPICS) private readonly topics: TopicNames,
    private readonly endpoints: EndpointRepository,
    private readonly messages: MessageRepository,
    private readonly producer: KafkaProducer,
    private readonly recorder: AttemptRecorder,
    @Inject(DISPATCH_SLOTS) private readonly slots: DispatchSlots,
    private readonly organizations: OrganizationRepository,
    @Inject(DESTINATION_REGISTRY) private readonly destinations: DispatcherDestinations,
  ) {
    this.circuitPolicy = config.delivery.circuit;
    this.shareHolds = new GroupedWork<string, void>(async (messageIds) => {
      await this.messages.hold(messageIds, new Date(Date.now() + SHARE_HOLD_MS));
      return messageIds.map(() => undefined);
    });
  }

  /**
   * Delivers a group of messages. Throws only when the management store cannot be read, before
   * any attempt: the caller retries the group later and no attempt is used up.
   */
  async deliver(deliveries: readonly PendingDelivery[]): Promise<void> {
    const sends = await this.start(deliveries);
    await Promise.all(sends.values());
  }

  /**
   * Reads the endpoints fresh, settles the messages that cannot go now (deleted endpoint, held,
   * expired) and starts the others' attempts, returning each started send by message id. Throws
   * (before any attempt) when the management store cannot be read.
   */
  async start(deliveries: readonly PendingDelivery[]): Promise<Map<string, Promise<void>>> {
    const sends = new Map<string, Promise<void>>();
    if (deliveries.length === 0) return sends;
    const now = new Date();
    const endpointIds = [...new Set(deliveries.map((d) => d.endpointId))];
    const [endpoints, secrets] = await Promise.all([
      this.endpoints.findByIds(endpointIds),
      this.endpoints.signingSecrets(endpointIds, now),
    ]);
    const byId = new Map(endpoints.map((endpoint) => [endpoint.id, endpoint]));

    const cancelled: PendingDelivery[] = [];
    const held: PendingDelivery[] = [];
    const expired: PendingDelivery[] = [];
    const ready: PendingDelivery[] = [];
    for (const delivery of deliveries) {
      const endpoint = byId.get(delivery.endpointId);
      if (!endpoint || endpoint.deletedAt) cancelled.push(delivery);
      else if (endpoint.status !== 'active') {
        const maxAgeMs = (endpoint.retry ?? DEFAULT_RETRY_POLICY).maxAgeMs;
        if (now.getTime() - delivery.acceptedAt.getTime() > maxAgeMs) expired.push(delivery);
        else held.push(delivery);
      } else ready.push(delivery);
    }

    await this.deadLetter(cancelled, 'endpoint_deleted', 'cancelled');
    await this.deadLetter(expired, 'max_age', 'expired');
    await this.messages.hold(
      held.map((d) => d.messageId),
      new Date(now.getTime() + this.config.delivery.holdRecheckMs),
    );
    await this.messages.markInFlight(ready.map((d) => d.messageId));
    for (const delivery of ready) {
      const send = this.limited(delivery, () =>
        this.sendOne(
          delivery,
          byId.get(delivery.endpointId)!,
          secrets.get(delivery.endpointId) ?? [],
        ),
      );
      // The caller handles failures; this only keeps an early one from counting as unhandled.
      send.catch(() => undefined);
      sends.set(delivery.messageId, send);
    }
    return sends;
  }

  /**
   * One message through the endpoint's rate limit and circuit breaker, then the attempt. A message
   * that may not go now is held on the retry schedule without using an attempt; a new message
   * meeting an open circuit is skipped into the DLQ (circuit_open).
   */
  private async sendOne(delivery: PendingDelivery, endpoint: EndpointEntity, secrets: string[]) {
    const token = await this.waitForToken(endpoint);
    if (token !== true) return this.messages.hold([delivery.messageId], token);
    const gate = circuitGate(this.circuitOf(endpoint.id), Date.now(), this.circuitPolicy);
    this.setCircuit(endpoint.id, gate.next);
    if (!gate.allowed) {
      if (delivery.source === 'new') return this.deadLetter([delivery], 'circuit_open', 'skipped');
      return this.messages.hold([delivery.messageId], new Date(gate.retryAt));
    }
    const { outcome } = await this.attempt(delivery, endpoint, secrets);
    this.afterAttempt(endpoint.id, outcome);
  }

  /** Moves the endpoint's circuit breaker on by the outcome of an attempt. */
  afterAttempt(endpointId: string, outcome: 'succeeded' | 'retry' | 'failed'): void {
    const result =
      outcome === 'succeeded' ? 'success' : outcome === 'retry' ? 'failure' : 'neutral';
    const next = circuitAfterAttempt(
      this.circuitOf(endpointId),
      result,
      Date.now(),
      this.circuitPolicy,
    );
    if (next.state === 'open' && this.circuitOf(endpointId).state !== 'open') {
      this.logger.warn(
        `circuit opened for endpoint ${endpointId} after ${next.consecutiveFailures} failures`,
      );
    }
    this.setCircuit(endpointId, next);
  }

  get circuitSettings(): CircuitPolicy {
    return this.circuitPolicy;
  }

  circuitOf(endpointId: string): CircuitState {
    return this.circuits.get(endpointId) ?? CLOSED;
  }

  setCircuit(endpointId: string, state: CircuitState): void {
    // Healthy endpoints keep no entry, so the map grows only with troubled ones.
    if (state.state === 'closed' && state.consecutiveFailures === 0)
      this.circuits.delete(endpointId);
    else this.circuits.set(endpointId, state);
  }

  /**
   * Waits for the endpoint's rate limit to allow an attempt. Short waits happen here; a longer one
   * returns the time to hold the message until, so the partition is not held up meanwhile.
   */
  async waitForToken(endpoint: EndpointEntity): Promise<true | Date> {
    const rate = endpoint.rateLimitPerSecond;
    if (!rate) return true;
    for (;;) {
      const now = Date.now();
      const grant = takeToken(this.buckets.get(endpoint.id), rate, now);
      this.buckets.set(endpoint.id, grant.bucket);
      if (grant.granted) return true;
      if (grant.waitMs > MAX_INLINE_RATE_WAIT_MS) return new Date(now + grant.waitMs);
      await new Promise((resolve) => setTimeout(resolve, grant.waitMs));
    }
  }

  /**
   * One attempt through the endpoint kind's adapter, decided and recorded (a message that fails
   * for good is dead-lettered first). Returns once the attempt is stored.
   */
  async attempt(
    delivery: PendingDelivery,
    endpoint: EndpointEntity,
    secrets: readonly string[],
    options: { deferSuccessRecord?: boolean } = {},
  ): Promise<{
    outcome: 'succeeded' | 'retry' | 'failed';
    decision: DeliveryDecision;
    /** The attempt's record in the store; already settled unless a success was deferred. */
    recorded: Promise<void>;
  }> {
    const adapter = this.destinations.adapterFor(endpoint.kind);
    const attemptNumber = delivery.attemptsMade + 1;
    const startedAt = new Date();
    const report = adapter
      ? await this.deliverThrough(adapter, delivery, endpoint, secrets, attemptNumber)
      : {
          outcome: {
            kind: 'failed' as const,
            error: `endpoint kind ${endpoint.kind} is not supported`,
          },
          durationMs: 0,
          responseExcerpt: null,
        };
    const decision = decideAfterAttempt({
      outcome: report.outcome,
      policy: endpoint.retry ?? DEFAULT_RETRY_POLICY,
      attemptsMade: attemptNumber,
      acceptedAt: delivery.acceptedAt,
      now: new Date(),
    });
    const outcome = report.outcome;
    const record: AttemptRecord = {
      messageId: delivery.messageId,
      attemptNumber,
      startedAt,
      durationMs: report.durationMs,
      outcome: outcome.kind,
      responseStatus: outcome.status ?? null,
      responseExcerpt: report.responseExcerpt,
      error: outcome.kind === 'succeeded' ? null : outcome.error,
      messageStatus: decision.status,
      nextAttemptAt: decision.status === 'awaiting_retry' ? decision.nextAttemptAt : null,
    };
    // The DLQ record goes out before the final status is written: a crash in between re-sends
    // the message (at least once) rather than losing its DLQ entry.
    if (decision.status === 'failed') {
      await this.producer.publish(
        this.topics.dlq,
        dlqMessage(
          delivery,
          decision.dlqReason,
          attemptNumber,
          record.error,
          record.responseStatus,
        ),
      );
    }
    const recorded = this.recorder.record(record);
    if (options.deferSuccessRecord && decision.status === 'succeeded') {
      // The caller awaits it later (a FIFO lane, before it next reads its queue); until then a
      // failure must not surface as an unhandled rejection.
      recorded.catch(() => undefined);
      return { outcome: outcome.kind, decision, recorded };
    }
    await recorded;
    return { outcome: outcome.kind, decision, recorded };
  }

  /**
   * The attempt through the kind's adapter, with the endpoint's stored credentials decrypted into
   * its config. Credentials that cannot be decrypted (no key, or not the key they were sealed
   * with) are an operator's mistake that a restart with the right key fixes: the attempt is
   * retried on the endpoint's schedule, not failed for good.
   *
   * A cloud endpoint without credentials of its own is given its organization's host-identity
   * grant, read fresh (an operator's withdrawal applies at the next attempt); the adapter refuses
   * it when the grant does not cover the target.
   */
  private async deliverThrough(
    adapter: DestinationAdapter,
    delivery: PendingDelivery,
    endpoint: EndpointEntity,
    secrets: readonly string[],
    attemptNumber: number,
  ): Promise<DeliveryReport> {
    let config: Record<string, unknown>;
    let hostIdentity: HostIdentityGrant | null = null;
    try {
      config = this.destinations.openConfig(endpoint);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return {
        outcome: { kind: 'retry', error: `stored credentials: ${reason}` },
        durationMs: 0,
        responseExcerpt: null,
      };
    }
    if (endpoint.kind === 'http' && secrets.length === 0) {
      // Every http endpoint has a secret: none that opens means the key is missing or changed
      // (ADR 17), the operator's mistake, retried on the endpoint's schedule as for credentials.
      return {
        outcome: {
          kind: 'retry',
          error:
            'no signing secret can be opened: is HOOKBASE_CREDENTIALS_KEY the key they were sealed with?',
        },
        durationMs: 0,
        responseExcerpt: null,
      };
    }
    if (isCloudDestinationKind(endpoint.kind) && !hasStoredCredentials(endpoint.config)) {
      try {
        hostIdentity = await this.organizations.hostCloudIdentity(endpoint.organizationId);
      } catch {
        return {
          outcome: {
            kind: 'retry',
            error: "the organization's host identity setting could not be read",
          },
          durationMs: 0,
          responseExcerpt: null,
        };
      }
    }
    return adapter.deliver(
      {
        messageId: delivery.messageId,
        webhookId: delivery.webhookId,
        eventId: delivery.eventId,
        eventType: delivery.eventType,
        payload: delivery.payload,
        attemptNumber,
      },
      {
        endpointId: endpoint.id,
        kind: endpoint.kind,
        url: endpoint.url,
        config,
        secrets,
        ordered: endpoint.fifoEnabled,
        hostIdentity,
      },
    );
  }

  /** Sends messages to the DLQ with `reason` and ends them with `status`. */
  async deadLetter(
    deliveries: PendingDelivery[],
    reason: DlqReason,
    status: 'cancelled' | 'expired' | 'skipped',
  ): Promise<void> {
    if (deliveries.length === 0) return;
    await this.producer.send(
      this.topics.dlq,
      deliveries.map((d) => dlqMessage(d, reason, d.attemptsMade, null, null)),
    );
    await this.messages.setStatus(
      deliveries.map((d) => d.messageId),
      status,
    );
  }

  /**
   * Runs a task in one of the organization's slots of the process-wide pool of attempts in
   * flight, waiting as long as it takes (FIFO lanes use it: a waiting lane holds no offsets).
   */
  withDispatchSlot<T>(organizationId: string, task: () => Promise<T>): Promise<T> {
    return this.slots.run(organizationId, task);
  }

  /**
   * Bounded concurrency per endpoint, then a slot of the organization's share of the process's
   * pool, so neither one busy endpoint nor one organization's hanging endpoints can take all. A
   * message whose organization already holds its share and finds no slot within
   * MAX_SHARE_WAIT_MS is held on the retry schedule instead, without using an attempt.
   */
  private async limited(delivery: PendingDelivery, task: () => Promise<void>): Promise<void> {
    const { endpointId, organizationId } = delivery;
    let slot = this.perEndpoint.get(endpointId);
    if (!slot) {
      slot = { limit: new ConcurrencyLimit(this.config.delivery.endpointConcurrency), users: 0 };
      this.perEndpoint.set(endpointId, slot);
    }
    slot.users++;
    let outcome;
    try {
      outcome = await slot.limit.run(() =>
        this.slots.runWithinShare(organizationId, task, MAX_SHARE_WAIT_MS),
      );
    } finally {
      if (--slot.users === 0) this.perEndpoint.delete(endpointId);
    }
    if (!outcome.ran) await this.shareHolds.run([delivery.messageId]);
  }

  async onApplicationShutdown(): Promise<void> {
    for (const error of await this.destinations.close()) this.logger.warn(error.message);
  }
}

function dlqMessage(
  delivery: PendingDelivery,
  reason: DlqReason,
  attempts: number,
  lastError: string | null,
  lastResponseStatus: number | null,
) {
  const record: DlqRecord = {
    messageId: delivery.messageId,
    organizationId: delivery.organizationId,
    endpointId: delivery.endpointId,
    eventId: delivery.eventId,
    eventType: delivery.eventType,
    reason,
    attempts,
    lastError,
    lastResponseStatus,
    deadLetteredAt: new Date().toISOString(),
  };
  return { key: delivery.endpointId, value: JSON.stringify(record) };
}
