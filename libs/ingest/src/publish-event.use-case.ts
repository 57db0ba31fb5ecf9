import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import {
  admissionError,
  DomainError,
  EventEnvelope,
  eventFingerprint,
  newId,
  PublishEventInput,
} from '@hookbase/domain';
import {
  ingestRecordHeaders,
  KafkaProducer,
  PublishTimeoutError,
  TOPICS,
  TopicNames,
  traceHeaders,
} from '@hookbase/kafka';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import { EventTypeCatalog, IdempotencyRepository, IdempotencyRecord } from '@hookbase/persistence';
import { IngestMetrics, METRICS, NO_METRICS } from '@hookbase/runtime';
import { ApplicationLookup } from './application-lookup';

/** Details of a 503 whose event Kafka may still store (the acknowledgement timed out). */
const UNCONFIRMED = Object.freeze({ retryAfterSeconds: 1, stored: 'unknown' });

const tracer = trace.getTracer('hookbase');

export interface PublishedEvent {
  id: string;
  eventType: string;
  acceptedAt: string;
  duplicate: boolean;
}

/**
 * Accepts one event: answers only once Kafka has it (acks=all), so "accepted" means stored. An
 * idempotency key is reserved in PostgreSQL first; a repeat returns the original event.
 */
@Injectable()
export class PublishEvent {
  private readonly logger = new Logger(PublishEvent.name);

  constructor(
    private readonly producer: KafkaProducer,
    private readonly idempotency: IdempotencyRepository,
    private readonly catalog: EventTypeCatalog,
    @Inject(TOPICS) private readonly topics: TopicNames,
    @Inject(HOOKBASE_CONFIG) private readonly config: HookbaseConfig,
    private readonly applications: ApplicationLookup,
    @Optional() @Inject(METRICS) private readonly metrics: IngestMetrics = NO_METRICS,
  ) {}

  /**
   * One `publish` span per event, in the caller's trace when the edge continues one; its context
   * goes to Kafka in the record's headers.
   */
  execute(organizationId: string, input: PublishEventInput): Promise<PublishedEvent> {
    return tracer.startActiveSpan(
      'publish',
      {
        kind: SpanKind.PRODUCER,
        attributes: {
          'hookbase.organization.id': organizationId,
          'hookbase.event.type': input.eventType,
        },
      },
      (span) => traced(span, this.accept(organizationId, input)),
    );
  }

  private async accept(organizationId: string, input: PublishEventInput): Promise<PublishedEvent> {
    // The organization's event type policy first: a refused event reserves no idempotency key.
    const admission = await this.unavailableOnError(() =>
      this.catalog.admit(organizationId, input.eventType, input.payload),
    );
    if (admission.kind === 'refused') throw admissionError(admission);
    // An unknown application is refused before anything is reserved or sent.
    const applicationId = input.applicationId
      ? await this.unavailableOnError(() =>
          this.applications.resolve(organizationId, input.applicationId!),
        )
      : undefined;
    const now = new Date();
    const envelope: EventEnvelope = {
      id: newId('evt', now.getTime()),
      organizationId,
      eventType: input.eventType,
      payload: input.payload,
      acceptedAt: now.toISOString(),
      ...(input.idempotencyKey ? { idempotencyKey: input.idempotencyKey } : {}),
      ...(input.endpointIds ? { endpointIds: input.endpointIds } : {}),
      ...(input.channels ? { channels: input.channels } : {}),
      ...(applicationId ? { applicationId } : {}),
    };
    if (!input.idempotencyKey) {
      await this.produce(envelope);
      return published(envelope, false);
    }

    const fingerprint = eventFingerprint(input.eventType, input.payload, applicationId);
    const reservation = await this.unavailableOnError(() =>
      this.idempotency.reserve({
        organizationId,
        key: input.idempotencyKey!,
        eventId: envelope.id,
        eventType: input.eventType,
        fingerprint,
        payload: input.payload,
        endpointIds: input.endpointIds ?? null,
        channels: input.channels ?? null,
        applicationId: applicationId ?? null,
        now,
      }),
    );
    if (reservation.kind === 'existing') {
      return this.repeat(organizationId, input.idempotencyKey, fingerprint, reservation.record);
    }
    try {
      await this.produce(envelope);
    } catch (error) {
      // A record Kafka may still store keeps its reservation: a repeat re-sends the same event id.
      if ((error as DomainError).details === UNCONFIRMED) throw error;
      await this.idempotency
        .release(organizationId, input.idempotencyKey, envelope.id)
        .catch((releaseError: Error) =>
          // The reservation stays unaccepted; a repeat with the same key will complete it.
          this.logger.warn(`could not release idempotency key: ${releaseError.message}`),
        );
      throw error;
    }
    await this.unavailableOnError(() =>
      this.idempotency.markAccepted(organizationId, input.idempotencyKey!, now),
    );
    return published(envelope, false);
  }

  /** A publish with a key already used: the same event again, or a conflict. */
  private async repeat(
    organizationId: string,
    key: string,
    fingerprint: string,
    record: IdempotencyRecord,
  ): Promise<PublishedEvent> {
    if (record.fingerprint !== fingerprint) {
      throw new DomainError(
        'IDEMPOTENCY_CONFLICT',
        'This idempotency key was used for an event with another type, payload or application',
        { eventId: record.eventId },
      );
    }
    if (record.acceptedAt) {
      return {
        id: record.eventId,
        eventType: record.eventType,
        acceptedAt: record.acceptedAt.toISOString(),
        duplicate: true,
      };
    }
    // The first publish was interrupted before Kafka acknowledged (or is still under way):
    // send the same event again. Downstream deduplicates by event id, so at most a duplicate.
    const acceptedAt = record.createdAt;
    await this.produce({
      id: record.eventId,
      organizationId,
      eventType: record.eventType,
      payload: record.payload,
      acceptedAt: acceptedAt.toISOString(),
      idempotencyKey: key,
      ...(record.endpointIds ? { endpointIds: record.endpointIds } : {}),
      ...(record.channels ? { channels: record.channels } : {}),
      ...(record.applicationId ? { applicationId: record.applicationId } : {}),
    });
    await this.unavailableOnError(() =>
      this.idempotency.markAccepted(organizationId, key, acceptedAt),
    );
    return {
      id: record.eventId,
      eventType: record.eventType,
      acceptedAt: acceptedAt.toISOString(),
      duplicate: true,
    };
  }

  private async produce(envelope: EventEnvelope): Promise<void> {
    const started = performance.now();
    try {
      await this.producer.publish(
        this.topics.events,
        {
          key: envelope.organizationId,
          value: JSON.stringify(envelope),
          headers: ingestRecordHeaders(traceHeaders()),
        },
        this.config.http.ackTimeoutMs,
      );
      this.metrics.publishFinished('acked', (performance.now() - started) / 1000);
    } catch (error) {
      this.metrics.publishFinished(
        error instanceof PublishTimeoutError ? 'timeout' : 'error',
        (performance.now() - started) / 1000,
      );
      this.logger.error(`event not accepted: ${(error as Error).message}`);
      if (error instanceof PublishTimeoutError) {
        throw new DomainError(
          'SERVICE_UNAVAILABLE',
          'Kafka did not confirm the event in time; retry (with the same idempotencyKey, so that it cannot be stored twice)',
          UNCONFIRMED,
        );
      }
      throw new DomainError('SERVICE_UNAVAILABLE', 'Event not accepted; retry shortly', {
        retryAfterSeconds: 1,
      });
    }
  }

  private async unavailableOnError<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (error instanceof DomainError) throw error;
      this.logger.error(`event not accepted: ${(error as Error).message}`);
      throw new DomainError('SERVICE_UNAVAILABLE', 'Event not accepted; retry shortly', {
        retryAfterSeconds: 1,
      });
    }
  }
}

/** Ends the publish span with what came of it: the event id, or the error that refused it. */
async function traced(span: Span, accepting: Promise<PublishedEvent>): Promise<PublishedEvent> {
  try {
    const event = await accepting;
    span.setAttributes({
      'hookbase.event.id': event.id,
      'hookbase.event.duplicate': event.duplicate,
    });
    return event;
  } catch (error) {
    const code = error instanceof DomainError ? error.code : 'UNEXPECTED';
    span.setStatus({ code: SpanStatusCode.ERROR, message: code });
    throw error;
  } finally {
    span.end();
  }
}

function published(envelope: EventEnvelope, duplicate: boolean): PublishedEvent {
  return {
    id: envelope.id,
    eventType: envelope.eventType,
    acceptedAt: envelope.acceptedAt,
    duplicate,
  };
}
