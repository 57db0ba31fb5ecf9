import { Inject, Injectable, Optional } from '@nestjs/common';
import { Context, ROOT_CONTEXT, Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { Kafka } from 'kafkajs';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import {
  FanoutMetrics,
  IngestMetrics,
  METRICS,
  NO_METRICS,
  tracesExported,
} from '@hookbase/runtime';
import {
  DeliveryRecord,
  deliveryRecordValue,
  EventEnvelope,
  eventEnvelopeParser,
  GroupedWork,
  payloadTravelsInline,
} from '@hookbase/domain';
import {
  ConsumedRecord,
  KAFKA,
  KafkaProducer,
  RejectedRecord,
  TopicNames,
  TOPICS,
  TopicWorker,
  traceContextOfHeaders,
  traceHeaders,
  traceParentOf,
  writtenAsOperational,
  writtenByIngest,
} from '@hookbase/kafka';
import { Arrival, EnvelopeAdmission } from './envelope-admission.service';
import { RecordEventMessages } from './record-event-messages.use-case';

/**
 * A delivery record to produce, with its event's payload already written as JSON, or undefined
 * when the payload is read from the event (too large to go with every record).
 */
type OutgoingDelivery = Omit<DeliveryRecord, 'payload'> & { payloadJson: string | undefined };

const tracer = trace.getTracer('hookbase');

/** An event's `fan-out` span, in the trace its record carried, and the context it starts. */
interface EventTrace {
  span: Span;
  context: Context;
}

/**
 * Reads accepted events and writes one delivery per recipient endpoint, keyed by endpoint id,
 * in event order. Input offsets are committed only after the deliveries are acknowledged, and
 * recording is idempotent, so a crash at any point neither loses nor reorders.
 */
@Injectable()
export class FanoutConsumer extends TopicWorker<EventEnvelope> {
  /** Partitions' batches that arrive while one is being recorded go together in the next. */
  private readonly intake = new GroupedWork<Arrival, void>((arrivals) => this.fanOut(arrivals));

  constructor(
    @Inject(KAFKA) kafka: Kafka,
    @Inject(TOPICS) private readonly topics: TopicNames,
    @Inject(HOOKBASE_CONFIG) private readonly config: HookbaseConfig,
    private readonly recordMessages: RecordEventMessages,
    private readonly producer: KafkaProducer,
    private readonly admission: EnvelopeAdmission,
    @Optional()
    @Inject(METRICS)
    private readonly metrics: FanoutMetrics & IngestMetrics = NO_METRICS,
  ) {
    super(kafka, config, {
      role: 'fanout',
      topic: topics.events,
      schema: eventEnvelopeParser,
      // Every partition's batch of a fetch joins one fan-out (GroupedWork), so one transaction
      // and one produce per fetch; with fewer than the topic's partitions (6 by default) the rest
      // of a fetch waited for a second and third round, which was most of the way to the fan-out.
      partitionsConsumedConcurrently: 12,
    });
  }

  protected async handle(all: EventEnvelope[], sources: ConsumedRecord[]): Promise<void> {
    await this.intake.run(all.map((envelope, index) => ({ envelope, source: sources[index] })));
  }

  /**
   * Records the events of every partition whose batch arrived while the last one was being
   * recorded, in one transaction, and sends their deliveries in one produce: each partition's
   * events keep their order (an organization's events are all on one partition).
   */
  private async fanOut(arrivals: readonly Arrival[]): Promise<void[]> {
    const admitted = await this.admission.admit(arrivals);
    const envelopes = admitted.map((a) => a.envelope);
    const traces = tracesExported() ? startEventTraces(admitted) : new Map<string, EventTrace>();
    // Only Hookbase's own operational events may reach operational endpoints.
    const operational = new Set(
      admitted.filter((a) => writtenAsOperational(a.source.headers)).map((a) => a.envelope.id),
    );
    try {
      await this.recordAndSend(envelopes, traces, operational);
      // Ingest counted its own events when Kafka acknowledged them; those of direct producers
      // are accepted here, once recorded.
      this.metrics.eventsAccepted(
        'kafka',
        admitted.filter((a) => !writtenByIngest(a.source.headers)).length,
      );
    } catch (error) {
      for (const { span } of traces.values()) span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      for (const { span } of traces.values()) span.end();
    }
    return arrivals.map(() => undefined);
  }

  private async recordAndSend(
    envelopes: EventEnvelope[],
    traces: ReadonlyMap<string, EventTrace>,
    operational: ReadonlySet<string>,
  ): Promise<void> {
    // Each event keeps its fan-out's trace context, for the attempts that start from the store.
    const traceParents = new Map(
      [...traces].map(([eventId, { context }]) => [eventId, traceParentOf(context)]),
    );
    const recorded = await this.recordMessages.execute({ envelopes, operational, traceParents });
    // Messages of polling endpoints are complete once recorded (in their poll log): nothing to send.
    // An event's payload is written as JSON once, for all of its deliveries; a large one goes
    // without them, and the dispatcher reads it from the event (recorded above).
    const inlineLimit = this.config.delivery.inlinePayloadBytes;
    const deliveries = envelopes.flatMap((envelope) => {
      const messages = (recorded.get(envelope.id) ?? []).filter((message) => !message.polled);
      if (messages.length === 0) return [];
      const json = inlineLimit === 0 ? undefined : JSON.stringify(envelope.payload);
      const payloadJson =
        json !== undefined && payloadTravelsInline(json, inlineLimit) ? json : undefined;
      return messages.map((message): OutgoingDelivery => ({
        messageId: message.messageId,
        eventId: envelope.id,
        organizationId: envelope.organizationId,
        endpointId: message.endpointId,
        eventType: envelope.eventType,
        acceptedAt: envelope.acceptedAt,
        payloadJson,
      }));
    });
    // Duplicated envelopes (a repeated publish) produce their deliveries once.
    const seen = new Set<string>();
    const unique = deliveries.filter((d) => !seen.has(d.messageId) && seen.add(d.messageId));
    const countOf = new Map<string, number>();
    for (const delivery of unique)
      countOf.set(delivery.eventId, (countOf.get(delivery.eventId) ?? 0) + 1);
    for (const [eventId, { span }] of traces)
      span.setAttribute('hookbase.fanout.deliveries', countOf.get(eventId) ?? 0);
    await this.producer.send(
      this.topics.deliveries,
      unique.map((delivery) => {
        const eventTrace = traces.get(delivery.eventId);
        return {
          key: delivery.endpointId,
          value: deliveryRecordValue(delivery, delivery.payloadJson),
          headers: eventTrace && traceHeaders(eventTrace.context),
        };
      }),
    );
    this.metrics.eventsFannedOut(envelopes.length, unique.length);
  }

  protected override async passOver(rejected: RejectedRecord[]): Promise<void> {
    await this.admission.setAside(rejected, 'invalid_record');
  }
}

/**
 * One `fan-out` span per admitted event, a child of the span its record's headers carry (the
 * publish), keyed by event id (a repeated event has one). Made only when the process exports
 * traces: without, the events go on without a trace, as those set aside do.
 */
function startEventTraces(arrivals: readonly Arrival[]): Map<string, EventTrace> {
  const traces = new Map<string, EventTrace>();
  for (const { envelope, source } of arrivals) {
    if (traces.has(envelope.id)) continue;
    const span = tracer.startSpan(
      'fan-out',
      {
        kind: SpanKind.CONSUMER,
        attributes: {
          'hookbase.event.id': envelope.id,
          'hookbase.event.type': envelope.eventType,
          'hookbase.organization.id': envelope.organizationId,
        },
      },
      traceContextOfHeaders(source.headers),
    );
    traces.set(envelope.id, { span, context: trace.setSpan(ROOT_CONTEXT, span) });
  }
  return traces;
}
