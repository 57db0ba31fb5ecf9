import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import {
  decideAfterAttempt,
  DEFAULT_RETRY_POLICY,
  DeliveryDecision,
  DlqReason,
  DlqRecord,
  GroupedWork,
  HostIdentityGrant,
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
import { DESTINATION_REGISTRY, DispatcherDestinations } from './destination-registry.provider';
import { DeliveryGuards, EndpointGuards } from './endpoint-guards';

/**
 * A message whose organization holds its whole share of the dispatch pool and found no slot in
 * time is held on the retry schedule this long (no attempt used).
 */
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
    @Inject(EndpointGuards) private readonly guards: DeliveryGuards,
    private readonly organizations: OrganizationRepository,
    @Inject(DESTINATION_REGISTRY) private readonly destinations: DispatcherDestinations,
  ) {
    this.shareHolds = new GroupedWork<string, void>(async (messageIds) => {
      await this.messages.hold(messageIds, new Date(Date.now() + SHARE_HOLD_MS));
      return messageIds.map(() => undefined);
    });
  }

  /** Holds a message that found no slot in its organization's share, without an attempt. */
  private readonly holdForShare = (delivery: PendingDelivery): Promise<unknown> =>
    this.shareHolds.run([delivery.messageId]);

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
      // Bounded concurrency per endpoint, then a slot of the organization's share of the
      // process's pool, so neither one busy endpoint nor one organization's hanging endpoints can
      // take all; a message that finds no slot in its organization's share in time is held.
      const send = this.guards.withinConcurrency(
        delivery,
        () =>
          this.sendOne(
            delivery,
            byId.get(delivery.endpointId)!,
            secrets.get(delivery.endpointId) ?? [],
          ),
        this.holdForShare,
      );
      // The caller handles failures; this only keeps an early one from counting as unhandled.
      send.catch(() => undefined);
      sends.set(delivery.messageId, send);
    }
    return sends;
  }

  /**
   * One message through the endpoint's guards (circuit breaker, then rate limit), then the
   * attempt. A message that may not go now is held on the retry schedule without using an
   * attempt; a new message meeting an open circuit is skipped into the DLQ (circuit_open).
   */
  private async sendOne(delivery: PendingDelivery, endpoint: EndpointEntity, secrets: string[]) {
    const admission = await this.guards.admit(endpoint);
    if (admission !== true) {
      if (admission.reason === 'circuit_open' && delivery.source === 'new') {
        return this.deadLetter([delivery], 'circuit_open', 'skipped');
      }
      return this.messages.hold([delivery.messageId], admission.until);
    }
    const { outcome } = await this.attempt(delivery, endpoint, secrets);
    this.guards.afterAttempt(endpoint.id, outcome);
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
