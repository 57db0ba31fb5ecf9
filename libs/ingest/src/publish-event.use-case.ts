import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { context, Context, Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import {
  admissionError,
  DomainError,
  EventEnvelope,
  eventEnvelopeValue,
  eventFingerprint,
  isoTimestamp,
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
import {
  EventTypeCatalog,
  IdempotencyRecord,
  IdempotencyRepository,
  Reservation,
} from '@hookbase/persistence';
import { IngestMetrics, METRICS, NO_METRICS, tracesExported } from '@hookbase/runtime';
import { AcceptedKey, AcceptedKeys } from './accepted-keys';
import { ApplicationLookup } from './application-lookup';

/** Details of a 503 whose event Kafka may still store (the acknowledgement timed out). */
const UNCONFIRMED = Object.freeze({ retryAfterSeconds: 1, stored: 'unknown' });

const tracer = trace.getTracer('hookbase');

/**
 * An input's payload as the JSON text it was parsed from, when the edge read it from text of its
 * own (gRPC's `payload_json`): the event's record carries that text instead of the payload written
 * out again. A symbol, so that no request body can set it.
 */
export const PAYLOAD_JSON = Symbol('the payload as the JSON text it was parsed from');

/** An input as an edge read it, with the payload's text when it had one. */
export type ReadEventInput = PublishEventInput & { [PAYLOAD_JSON]?: string };

/** The payload text of an input whose payload is still the object parsed from it. */
function payloadJsonOf(input: PublishEventInput): string | undefined {
  return (input as ReadEventInput)[PAYLOAD_JSON];
}

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
  /** Keys accepted here lately: a repeat is answered from them while PostgreSQL is out of reach. */
  private readonly acceptedKeys = new AcceptedKeys();

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
  async execute(organizationId: string, input: PublishEventInput): Promise<PublishedEvent> {
    const [outcome] = await this.executeAll(organizationId, [input]);
    if (outcome.kind === 'refused') throw outcome.error;
    return outcome.event;
  }

  /**
   * Accepts several events of one organization (a batch), each admitted or refused on its own;
   * outcomes come back in the order given. Once the keyed events' keys are reserved, the events to
   * send go to Kafka together, in one publish and in the order given: a batch waits once for its
   * acknowledgement, not once per event, and keeps its order.
   * Each event has its own `publish` span, as `execute` gives it.
   */
  async executeAll(
    organizationId: string,
    inputs: readonly PublishEventInput[],
  ): Promise<PublishOutcome[]> {
    const parent = context.active();
    // Without an exporter the spans would be no-ops: none is made, and the events go on in the
    // caller's context.
    const spans = tracesExported()
      ? inputs.map((input) =>
          tracer.startSpan(
            'publish',
            {
              kind: SpanKind.PRODUCER,
              attributes: {
                'hookbase.organization.id': organizationId,
                'hookbase.event.type': input.eventType,
              },
            },
            parent,
          ),
        )
      : undefined;
    const contexts = spans?.map((span) => trace.setSpan(parent, span));
    const contextOf = (i: number) => contexts?.[i] ?? parent;
    const envelopes = await this.envelopesFor(organizationId, inputs);
    const outcomes: PublishOutcome[] = new Array(inputs.length);
    // Keys first: a keyed event joins the batch's send once its key is reserved for it, so the
    // batch goes to Kafka in one publish, in the order given; a repeat is answered on its own.
    // Only keyed events cost a promise each.
    const keyedAt: number[] = [];
    envelopes.forEach((prepared, i) => {
      if (prepared.kind !== 'refused' && prepared.value.idempotencyKey) keyedAt.push(i);
    });
    const reservations = new Map<number, Settled<KeyReservation>>();
    if (keyedAt.length > 0) {
      const settledAll = await Promise.all(
        keyedAt.map((i) =>
          settled(
            this.reserveKey(inputs[i], (envelopes[i] as Value<EventEnvelope>).value, contextOf(i)),
          ),
        ),
      );
      keyedAt.forEach((i, k) => reservations.set(i, settledAll[k]));
    }
    const toSend: number[] = [];
    const fingerprints = new Map<number, string>();
    envelopes.forEach((prepared, i) => {
      const reservation = reservations.get(i);
      if (prepared.kind === 'refused') outcomes[i] = prepared;
      else if (!reservation) toSend.push(i);
      else if (reservation.kind === 'refused') outcomes[i] = reservation;
      else if (reservation.value.kind === 'answered') {
        outcomes[i] = published(reservation.value.event);
      } else {
        fingerprints.set(i, reservation.value.fingerprint);
        toSend.push(i);
      }
    });
    if (toSend.length > 0) {
      const sending = toSend.map((i) => (envelopes[i] as Value<EventEnvelope>).value);
      const produced = await settled(
        this.produce(
          sending,
          contexts && toSend.map((i) => contexts[i]),
          toSend.map((i) => payloadJsonOf(inputs[i])),
        ),
      );
      const keyedDone: Promise<void>[] = [];
      toSend.forEach((i, at) => {
        const envelope = sending[at];
        const fingerprint = fingerprints.get(i);
        if (produced.kind === 'refused') {
          outcomes[i] = produced;
          if (fingerprint !== undefined) keyedDone.push(this.releaseKey(envelope, produced.error));
        } else if (fingerprint === undefined) {
          outcomes[i] = published({ ...envelopeEvent(envelope), duplicate: false });
        } else {
          keyedDone.push(
            settled(this.keyAccepted(envelope, fingerprint)).then((accepted) => {
              outcomes[i] = accepted.kind === 'refused' ? accepted : published(accepted.value);
            }),
          );
        }
      });
      await Promise.all(keyedDone);
    }
    spans?.forEach((span, i) => endSpan(span, outcomes[i]));
    return outcomes;
  }

  /**
   * Each event's envelope, or the error that refused it, in the order given. An event that needs
   * no read (its organization's catalog is in this process, no application named) gets it at
   * once: only the others wait, so a batch costs no promise per event.
   */
  private async envelopesFor(
    organizationId: string,
    inputs: readonly PublishEventInput[],
  ): Promise<Prepared[]> {
    const envelopes: Prepared[] = new Array(inputs.length);
    const reads: Promise<void>[] = [];
    inputs.forEach((input, i) => {
      try {
        const admission = input.applicationId
          ? undefined
          : this.unavailableOnErrorNow(() =>
              this.catalog.admitKnown(organizationId, input.eventType, input.payload),
            );
        if (admission === undefined) {
          reads.push(
            settled(this.envelopeAfterReads(organizationId, input)).then((prepared) => {
              envelopes[i] = prepared;
            }),
          );
        } else {
          if (admission.kind === 'refused') throw admissionError(admission);
          envelopes[i] = { kind: 'value', value: envelopeOf(organizationId, input, undefined) };
        }
      } catch (error) {
        envelopes[i] = { kind: 'refused', error };
      }
    });
    if (reads.length > 0) await Promise.all(reads);
    return envelopes;
  }

  /**
   * The event's envelope, once its organization's policy admits it (its catalog read if this
   * process has none) and its application exists.
   */
  private async envelopeAfterReads(
    organizationId: string,
    input: PublishEventInput,
  ): Promise<EventEnvelope> {
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
    return envelopeOf(organizationId, input, applicationId);
  }

  /**
   * An event with an idempotency key: the key is reserved in PostgreSQL first, and a repeat
   * returns the original event (or a conflict).
   */
  /**
   * Reserves a keyed event's key for it: `reserved` (the event is to be sent), or `answered` when
   * the key was used before (the first event again, sent again if its first publish never
   * completed); throws IDEMPOTENCY_CONFLICT, or SERVICE_UNAVAILABLE when the key cannot be read.
   */
  private async reserveKey(
    input: PublishEventInput,
    envelope: EventEnvelope,
    spanContext: Context,
  ): Promise<
    { kind: 'reserved'; fingerprint: string } | { kind: 'answered'; event: PublishedEvent }
  > {
    const { organizationId, applicationId } = envelope;
    const key = envelope.idempotencyKey!;
    const fingerprint = eventFingerprint(input.eventType, input.payload, applicationId);
    let reservation: Reservation;
    try {
      reservation = await this.idempotency.reserve({
        organizationId,
        key,
        eventId: envelope.id,
        eventType: input.eventType,
        fingerprint,
        payload: input.payload,
        endpointIds: input.endpointIds ?? null,
        channels: input.channels ?? null,
        applicationId: applicationId ?? null,
        now: new Date(envelope.acceptedAt),
      });
    } catch (error) {
      // PostgreSQL cannot be reached: a repeat of a key accepted here lately is answered all the
      // same; anything else must wait, as its key cannot be reserved.
      const known =
        error instanceof DomainError ? undefined : this.acceptedKeys.recall(organizationId, key);
      if (known) return { kind: 'answered', event: this.repeatKnown(known, fingerprint) };
      throw this.unavailable(error);
    }
    if (reservation.kind === 'reserved') return { kind: 'reserved', fingerprint };
    const event = await this.repeat(
      organizationId,
      key,
      fingerprint,
      reservation.record,
      spanContext,
    );
    this.rememberAccepted(organizationId, key, event, fingerprint);
    return { kind: 'answered', event };
  }

  /** A keyed event Kafka stored: its key is marked accepted (and remembered here). */
  private async keyAccepted(envelope: EventEnvelope, fingerprint: string): Promise<PublishedEvent> {
    const { organizationId } = envelope;
    const key = envelope.idempotencyKey!;
    await this.unavailableOnError(() =>
      this.idempotency.markAccepted(organizationId, key, new Date(envelope.acceptedAt)),
    );
    const event: PublishedEvent = { ...envelopeEvent(envelope), duplicate: false };
    this.rememberAccepted(organizationId, key, event, fingerprint);
    return event;
  }

  /**
   * A keyed event Kafka did not store: its key is freed for a repeat, unless Kafka may still store
   * the record (then the reservation stays, and a repeat re-sends the same event id).
   */
  private async releaseKey(envelope: EventEnvelope, error: unknown): Promise<void> {
    if ((error as DomainError).details === UNCONFIRMED) return;
    await this.idempotency
      .release(envelope.organizationId, envelope.idempotencyKey!, envelope.id)
      .catch((releaseError: Error) =>
        // The reservation stays unaccepted; a repeat with the same key will complete it.
        this.logger.warn(`could not release idempotency key: ${releaseError.message}`),
      );
  }

  private rememberAccepted(
    organizationId: string,
    key: string,
    event: PublishedEvent,
    fingerprint: string,
  ): void {
    this.acceptedKeys.remember(organizationId, key, {
      eventId: event.id,
      eventType: event.eventType,
      acceptedAt: event.acceptedAt,
      fingerprint,
    });
  }

  /** A repeat of a key accepted here, answered from memory: the same event, or a conflict. */
  private repeatKnown(known: AcceptedKey, fingerprint: string): PublishedEvent {
    if (known.fingerprint !== fingerprint) throw idempotencyConflict(known.eventId);
    return {
      id: known.eventId,
      eventType: known.eventType,
      acceptedAt: known.acceptedAt,
      duplicate: true,
    };
  }

  /** A publish with a key already used: the same event again, or a conflict. */
  private async repeat(
    organizationId: string,
    key: string,
    fingerprint: string,
    record: IdempotencyRecord,
    spanContext: Context,
  ): Promise<PublishedEvent> {
    if (record.fingerprint !== fingerprint) throw idempotencyConflict(record.eventId);
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
    await this.produce(
      [
        {
          id: record.eventId,
          organizationId,
          eventType: record.eventType,
          payload: record.payload,
          acceptedAt: acceptedAt.toISOString(),
          idempotencyKey: key,
          ...(record.endpointIds ? { endpointIds: record.endpointIds } : {}),
          ...(record.channels ? { channels: record.channels } : {}),
          ...(record.applicationId ? { applicationId: record.applicationId } : {}),
        },
      ],
      [spanContext],
    );
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

  /**
   * Sends events to Kafka together, each record with its own span's context in its headers (none
   * without `traces`) and its payload's text where the edge read one; resolves once Kafka
   * acknowledged all of them (acks=all), or refuses all of them.
   */
  private async produce(
    envelopes: EventEnvelope[],
    traces: readonly Context[] | undefined,
    payloadTexts: readonly (string | undefined)[] = [],
  ): Promise<void> {
    const started = performance.now();
    const finished = (outcome: 'acked' | 'timeout' | 'error') => {
      const seconds = (performance.now() - started) / 1000;
      for (let i = 0; i < envelopes.length; i++) this.metrics.publishFinished(outcome, seconds);
    };
    // Without traces every record carries the same headers (the producer only reads them).
    const untraced = traces ? undefined : ingestRecordHeaders(undefined);
    try {
      await this.producer.publishAll(
        this.topics.events,
        envelopes.map((envelope, i) => ({
          key: envelope.organizationId,
          value: eventEnvelopeValue(envelope, payloadTexts[i]),
          headers: untraced ?? ingestRecordHeaders(traceHeaders(traces![i])),
        })),
        this.config.http.ackTimeoutMs,
      );
      finished('acked');
    } catch (error) {
      finished(error instanceof PublishTimeoutError ? 'timeout' : 'error');
      this.logger.error(
        `${envelopes.length === 1 ? 'event' : `${envelopes.length} events`} not accepted: ${(error as Error).message}`,
      );
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
      throw this.unavailable(error);
    }
  }

  /** `unavailableOnError` for work that does not wait. */
  private unavailableOnErrorNow<T>(run: () => T): T {
    try {
      return run();
    } catch (error) {
      throw this.unavailable(error);
    }
  }

  /** A failure that is not the event's fault, as the caller sees it: retry shortly. */
  private unavailable(error: unknown): unknown {
    if (error instanceof DomainError) return error;
    this.logger.error(`event not accepted: ${(error as Error).message}`);
    return new DomainError('SERVICE_UNAVAILABLE', 'Event not accepted; retry shortly', {
      retryAfterSeconds: 1,
    });
  }
}

/** An admitted event's envelope: its id and acceptance time are given now. */
function envelopeOf(
  organizationId: string,
  input: PublishEventInput,
  applicationId: string | undefined,
): EventEnvelope {
  const now = Date.now();
  const envelope: EventEnvelope = {
    id: newId('evt', now),
    organizationId,
    eventType: input.eventType,
    payload: input.payload,
    acceptedAt: isoTimestamp(now),
  };
  if (input.idempotencyKey) envelope.idempotencyKey = input.idempotencyKey;
  if (input.endpointIds) envelope.endpointIds = input.endpointIds;
  if (input.channels) envelope.channels = input.channels;
  if (applicationId) envelope.applicationId = applicationId;
  return envelope;
}

/** One event's outcome: published, or refused with the error that refused it. */
export type PublishOutcome =
  { kind: 'published'; event: PublishedEvent } | { kind: 'refused'; error: unknown };

type Value<T> = { kind: 'value'; value: T };

/** An event's envelope, or the error that refused it before anything was reserved or sent. */
type Prepared = Value<EventEnvelope> | { kind: 'refused'; error: unknown };

/** A promise's end as a value, so that one event's refusal never rejects its batch. */
/** A keyed event's key: reserved for it (to be sent), or used before (its event answered). */
type KeyReservation =
  { kind: 'reserved'; fingerprint: string } | { kind: 'answered'; event: PublishedEvent };

/** A piece of work's result, or the error that refused it. */
type Settled<T> = Value<T> | { kind: 'refused'; error: unknown };

function settled<T>(work: Promise<T>): Promise<Settled<T>> {
  return work.then(
    (value) => ({ kind: 'value', value }),
    (error: unknown) => ({ kind: 'refused', error }),
  );
}

function published(event: PublishedEvent): PublishOutcome {
  return { kind: 'published', event };
}

/** What a publish answers about an event it sent. */
function envelopeEvent(envelope: EventEnvelope): Omit<PublishedEvent, 'duplicate'> {
  return { id: envelope.id, eventType: envelope.eventType, acceptedAt: envelope.acceptedAt };
}

/** Ends the publish span with what came of it: the event id, or the error that refused it. */
function endSpan(span: Span, outcome: PublishOutcome): void {
  if (outcome.kind === 'published') {
    span.setAttributes({
      'hookbase.event.id': outcome.event.id,
      'hookbase.event.duplicate': outcome.event.duplicate,
    });
  } else {
    const { error } = outcome;
    const code = error instanceof DomainError ? error.code : 'UNEXPECTED';
    span.setStatus({ code: SpanStatusCode.ERROR, message: code });
  }
  span.end();
}

/** The same idempotency key again with another type, payload or application. */
function idempotencyConflict(eventId: string): DomainError {
  return new DomainError(
    'IDEMPOTENCY_CONFLICT',
    'This idempotency key was used for an event with another type, payload or application',
    { eventId },
  );
}
