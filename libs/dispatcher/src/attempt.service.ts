import { Inject, Injectable, Logger, OnApplicationShutdown, Optional } from '@nestjs/common';
import {
  context,
  INVALID_SPAN_CONTEXT,
  Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import {
  decideAfterAttempt,
  DEFAULT_RETRY_POLICY,
  DeliveryDecision,
  DomainError,
  HostIdentityGrant,
  ReceiverOptions,
} from '@hookbase/domain';
import {
  DeliveryReport,
  DestinationAdapter,
  hasStoredCredentials,
  isCloudDestinationKind,
} from '@hookbase/destinations';
import {
  KafkaProducer,
  OperationalEventPublisher,
  TOPICS,
  TopicNames,
  traceContextOfParent,
} from '@hookbase/kafka';
import { AttemptRecord, EndpointEntity, OrganizationRepository } from '@hookbase/persistence';
import { DeliveryMetrics, METRICS, NO_METRICS, tracesExported } from '@hookbase/runtime';
import { AttemptRecorder } from './attempt-recorder';
import { dlqMessage, exhaustedData } from './dead-letter.service';
import { DESTINATION_REGISTRY, DispatcherDestinations } from './destination-registry.provider';
import { EndpointHealthService } from './endpoint-health.service';
import { ReadyDelivery } from './pending-delivery';

/** What one attempt came to. */
export interface AttemptResultOf {
  outcome: 'succeeded' | 'retry' | 'failed';
  decision: DeliveryDecision;
  /** The attempt's record in the store; already settled unless a success was deferred. */
  recorded: Promise<void>;
}

/** One attempt of a message at its endpoint, decided and recorded. */
export interface Attempts {
  /**
   * One attempt through the registry's adapter for the endpoint's kind, decided and recorded (a
   * message that fails for good is dead-lettered first). Returns once the attempt is stored, or,
   * with `deferSuccessRecord`, a success returns at once with its store write under way.
   */
  attempt(
    delivery: ReadyDelivery,
    endpoint: EndpointEntity,
    secrets: readonly string[],
    options?: AttemptOptions,
  ): Promise<AttemptResultOf>;
}

export interface AttemptOptions {
  /** A success returns at once, its record's write under way in `recorded`. */
  deferSuccessRecord?: boolean;
  /**
   * The record is written without waiting for other attempts to join its write (for a FIFO lane,
   * whose next message waits for it).
   */
  recordSoon?: boolean;
}

const NO_OPTIONS: AttemptOptions = Object.freeze({});

const tracer = trace.getTracer('hookbase');
/** The span of an attempt made without an exporter: it records nothing. */
const NO_SPAN = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

@Injectable()
export class AttemptService implements Attempts, OnApplicationShutdown {
  private readonly logger = new Logger(AttemptService.name);

  constructor(
    @Inject(TOPICS) private readonly topics: TopicNames,
    private readonly producer: KafkaProducer,
    private readonly recorder: AttemptRecorder,
    private readonly organizations: OrganizationRepository,
    @Inject(DESTINATION_REGISTRY) private readonly destinations: DispatcherDestinations,
    @Optional() @Inject(METRICS) private readonly metrics: DeliveryMetrics = NO_METRICS,
    @Optional() private readonly health?: EndpointHealthService,
    @Optional() private readonly operational?: OperationalEventPublisher,
  ) {}

  /**
   * Each attempt is an `attempt` span of its own, a child of the event's fan-out (from the record's
   * headers, or from the store for retries and FIFO lanes), so waits show as gaps between spans.
   * Without an exporter there is none to make.
   */
  async attempt(
    delivery: ReadyDelivery,
    endpoint: EndpointEntity,
    secrets: readonly string[],
    options: AttemptOptions = NO_OPTIONS,
  ): Promise<AttemptResultOf> {
    if (!tracesExported()) return this.attemptOnce(delivery, endpoint, secrets, options, NO_SPAN);
    const parent = traceContextOfParent(delivery.traceParent);
    const span = tracer.startSpan(
      'attempt',
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'hookbase.message.id': delivery.messageId,
          'hookbase.event.id': delivery.eventId,
          'hookbase.endpoint.id': endpoint.id,
          'hookbase.endpoint.kind': endpoint.kind,
          'hookbase.attempt.number': delivery.attemptsMade + 1,
        },
      },
      parent,
    );
    try {
      // Active while the attempt runs, so what it logs or sends can name the trace.
      const result = await context.with(trace.setSpan(parent, span), () =>
        this.attemptOnce(delivery, endpoint, secrets, options, span),
      );
      span.setAttributes({
        'hookbase.attempt.outcome': result.outcome,
        'hookbase.message.status': result.decision.status,
      });
      if (result.outcome !== 'succeeded') span.setStatus({ code: SpanStatusCode.ERROR });
      return result;
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
      throw error;
    } finally {
      span.end();
    }
  }

  private async attemptOnce(
    delivery: ReadyDelivery,
    endpoint: EndpointEntity,
    secrets: readonly string[],
    options: AttemptOptions,
    span: Span,
  ): Promise<AttemptResultOf> {
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
    if (outcome.status !== undefined) span.setAttribute('hookbase.response.status', outcome.status);
    this.metrics.attemptFinished({
      kind: endpoint.kind,
      outcome: outcome.kind,
      responseStatus: outcome.status ?? null,
      endpointId: endpoint.id,
      seconds: report.durationMs / 1000,
    });
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
      this.metrics.deadLettered(decision.dlqReason, 1);
      // Told after the DLQ record is out; never awaited by delivery, never thrown.
      void this.operational?.emit(
        'message.attempt.exhausted',
        endpoint,
        exhaustedData(
          delivery,
          decision.dlqReason,
          attemptNumber,
          record.error,
          record.responseStatus,
        ),
      );
    }
    const recorded = this.recorder.record(record, { soon: options.recordSoon });
    const health = this.trackHealth(endpoint, outcome.kind);
    if (outcome.kind !== 'succeeded') await health;
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
   * The endpoint's failure streak and auto-disable (EndpointHealthService). Bookkeeping: a store
   * error here is logged and never changes the attempt's outcome.
   */
  private async trackHealth(
    endpoint: EndpointEntity,
    outcome: 'succeeded' | 'retry' | 'failed',
  ): Promise<void> {
    if (!this.health) return;
    try {
      await this.health.afterAttempt(endpoint, outcome, new Date());
    } catch (error) {
      this.logger.warn(
        `endpoint ${endpoint.id} health not recorded: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }

  /**
   * The attempt through the kind's adapter, with the endpoint's stored credentials opened into
   * its config. Credentials that cannot be opened (no key, or not the key they were sealed with)
   * are an operator's mistake that a restart with the right key fixes: the attempt is retried on
   * the endpoint's schedule, not failed for good.
   *
   * A cloud endpoint without credentials of its own is given its organization's host-identity
   * grant, read fresh (an operator's withdrawal applies at the next attempt); the adapter refuses
   * it when the grant does not cover the target.
   */
  private async deliverThrough(
    adapter: DestinationAdapter,
    delivery: ReadyDelivery,
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
    let receiver: ReceiverOptions | null = null;
    if (endpoint.deliveryOptions) {
      // Only endpoints that set options pay for opening them; the rest read nothing more.
      try {
        receiver = this.destinations.openReceiverOptions(
          endpoint.organizationId,
          endpoint.deliveryOptions,
        );
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        return {
          outcome: { kind: 'retry', error: `stored headers or auth: ${reason}` },
          durationMs: 0,
          responseExcerpt: null,
        };
      }
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
      } catch (error) {
        // The management store is unreachable: nothing was sent, so no attempt is used, recorded
        // or counted against the endpoint. The caller tries the message again later, as when the
        // endpoint itself could not be read.
        throw new DomainError(
          'SERVICE_UNAVAILABLE',
          `the organization's host identity setting could not be read: ${error instanceof Error ? error.message : String(error)}`,
        );
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
        receiver,
      },
    );
  }

  /** Lets the adapters' connections go. */
  async onApplicationShutdown(): Promise<void> {
    for (const error of await this.destinations.close()) this.logger.warn(error.message);
  }
}
