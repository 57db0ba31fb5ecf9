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
  findApplication,
  GroupedWork,
  planMessages,
  RecipientEndpoint,
  toStorableText,
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
import {
  ApplicationRepository,
  EventRepository,
  EventTypeCatalog,
  InvalidEventRepository,
  type LiveRecipients,
  OrganizationRepository,
  RecipientRepository,
} from '@hookbase/persistence';

/** A delivery record to produce, with its event's payload already written as JSON. */
type OutgoingDelivery = Omit<DeliveryRecord, 'payload'> & { payloadJson: string };

/** An event envelope as read, with where it was read. */
interface Arrival {
  envelope: EventEnvelope;
  source: ConsumedRecord;
}

const VALUE_EXCERPT_CHARS = 2_000;
const tracer = trace.getTracer('hookbase');

/** An event's `fan-out` span, in the trace its record carried, and the context it starts. */
interface EventTrace {
  span: Span;
  context: Context;
}

/** Marks an envelope whose application was not found (and so was set aside). */
const UNKNOWN = '\u0000unknown';

/** Organizations remembered as existing, at most; past it the memory starts over. */
const KNOWN_ORGANIZATIONS_MAX = 100_000;

/**
 * Reads accepted events and writes one delivery per recipient endpoint, keyed by endpoint id,
 * in event order. Input offsets are committed only after the deliveries are acknowledged, and
 * recording is idempotent, so a crash at any point neither loses nor reorders.
 */
@Injectable()
export class FanoutConsumer extends TopicWorker<EventEnvelope> {
  /**
   * Organizations found to exist. Organizations are never deleted, so a found one stays found and
   * is not asked for again; one not found is asked for again with its next event.
   */
  private knownOrganizations = new Set<string>();
  /** Partitions' batches that arrive while one is being recorded go together in the next. */
  private readonly intake = new GroupedWork<Arrival, void>((arrivals) => this.fanOut(arrivals));

  constructor(
    @Inject(KAFKA) kafka: Kafka,
    @Inject(TOPICS) private readonly topics: TopicNames,
    @Inject(HOOKBASE_CONFIG) config: HookbaseConfig,
    private readonly events: EventRepository,
    private readonly recipients: RecipientRepository,
    private readonly producer: KafkaProducer,
    private readonly organizations: OrganizationRepository,
    private readonly invalid: InvalidEventRepository,
    private readonly catalog: EventTypeCatalog,
    private readonly applications: ApplicationRepository,
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
    await this.fanOutInOrder(
      arrivals.map((a) => a.envelope),
      arrivals.map((a) => a.source),
    );
    return arrivals.map(() => undefined);
  }

  private async fanOutInOrder(read: EventEnvelope[], sources: ConsumedRecord[]): Promise<void> {
    // Direct producers may name an organization that does not exist: such events go aside too.
    const known = await this.existingOrganizations(read.map((e) => e.organizationId));
    const unknown = sources
      .filter((_, i) => !known.has(read[i].organizationId))
      .map((record) => ({ record, reason: 'unknown organization' }));
    if (unknown.length > 0) await this.quarantine(unknown);
    this.metrics.eventsRefused('kafka', 'unknown_organization', unknown.length);
    // And an application by uid, or one their organization does not have: resolved to its id, or
    // set aside like an unknown organization. Those of no known organization stay as they are.
    const all = await this.withApplicationIds(read, sources, known);
    // Ingest admitted its own events against the organization's event type policy; those of
    // direct producers are admitted here, and refused ones go aside with the reason.
    const refusals = await this.refusedByPolicy(all, sources, known);
    if (refusals.size > 0) {
      await this.quarantine(
        [...refusals].map(([index, reason]) => ({ record: sources[index], reason })),
      );
    }
    this.metrics.eventsRefused('kafka', 'event_type_policy', refusals.size);
    const setAside = (i: number) => refusals.has(i) || all[i].applicationId === UNKNOWN;
    const admitted = (i: number) => known.has(all[i].organizationId) && !setAside(i);
    const envelopes = all.filter((_, i) => admitted(i));
    const traces = tracesExported()
      ? startEventTraces(
          all.flatMap((envelope, i) => (setAside(i) ? [] : [{ envelope, source: sources[i] }])),
          known,
        )
      : new Map<string, EventTrace>();
    // Only Hookbase's own operational events may reach operational endpoints.
    const operational = new Set(
      all.filter((_, i) => writtenAsOperational(sources[i].headers)).map((e) => e.id),
    );
    try {
      await this.recordAndSend(envelopes, traces, operational);
      // Ingest counted its own events when Kafka acknowledged them; those of direct producers
      // are accepted here, once recorded.
      this.metrics.eventsAccepted(
        'kafka',
        all.filter((_, i) => admitted(i) && !writtenByIngest(sources[i].headers)).length,
      );
    } catch (error) {
      for (const { span } of traces.values()) span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      for (const { span } of traces.values()) span.end();
    }
  }

  private async recordAndSend(
    envelopes: EventEnvelope[],
    traces: ReadonlyMap<string, EventTrace>,
    operational: ReadonlySet<string>,
  ): Promise<void> {
    // Recipients are resolved here, once per event; the repository only stores the messages (and
    // keeps the ones an event already had when it was recorded before).
    // When every event names its endpoints (as FIFO producers often do), only those are read, not
    // every endpoint of their organizations.
    const named = envelopes.every((envelope) => envelope.endpointIds !== undefined)
      ? [...new Set(envelopes.flatMap((envelope) => envelope.endpointIds!))]
      : undefined;
    const organizationIds = [...new Set(envelopes.map((envelope) => envelope.organizationId))];
    // Each event keeps its fan-out's trace context, for the attempts that start from the store.
    const traceParents = new Map(
      [...traces].map(([eventId, { context }]) => [eventId, traceParentOf(context)]),
    );
    const planFor = async (live: LiveRecipients) =>
      planMessages(
        envelopes.map((envelope) => ({ ...envelope, operational: operational.has(envelope.id) })),
        [...live.recipients, ...(await this.routingsSinceReplaced(envelopes, live, named))],
      );
    // The recipients kept from an earlier batch are planned for at once, and recorded only if
    // their versions still hold, checked in the recording statement: one round trip instead of
    // two. When any moved, nothing was recorded, and they are read again.
    const kept = named ? undefined : this.recipients.keptRecipients(organizationIds);
    const recorded =
      (kept &&
        (await this.events.recordEvents(
          envelopes,
          await planFor(kept),
          traceParents,
          kept.versions,
        ))) ||
      (await this.events.recordEvents(
        envelopes,
        await planFor(await this.recipients.liveRecipients(organizationIds, named)),
        traceParents,
      ));
    // Messages of polling endpoints are complete once recorded (in their poll log): nothing to send.
    // An event's payload is written as JSON once, for all of its deliveries.
    const deliveries = envelopes.flatMap((envelope) => {
      const messages = (recorded.get(envelope.id) ?? []).filter((message) => !message.polled);
      if (messages.length === 0) return [];
      const payloadJson = JSON.stringify(envelope.payload);
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

  /** The events of direct producers that their organization's policy refuses, by index. */
  private async refusedByPolicy(
    all: readonly EventEnvelope[],
    sources: readonly ConsumedRecord[],
    known: ReadonlySet<string>,
  ): Promise<Map<number, string>> {
    const refusals = new Map<number, string>();
    for (let i = 0; i < all.length; i++) {
      const envelope = all[i];
      if (
        !known.has(envelope.organizationId) ||
        envelope.applicationId === UNKNOWN ||
        writtenByIngest(sources[i].headers)
      ) {
        continue;
      }
      const admission = await this.catalog.admit(
        envelope.organizationId,
        envelope.eventType,
        envelope.payload,
      );
      if (admission.kind === 'refused') {
        refusals.set(i, `${admission.code}: ${admission.message}`);
      }
    }
    return refusals;
  }

  /**
   * The envelopes with each application named by a direct producer (id or uid) replaced by its
   * id, and one their organization does not have marked UNKNOWN after being quarantined. Ingest
   * resolved its own envelopes' applications already: those are taken as they are.
   */
  private async withApplicationIds(
    envelopes: EventEnvelope[],
    sources: ConsumedRecord[],
    knownOrganizations: ReadonlySet<string>,
  ): Promise<EventEnvelope[]> {
    const toResolve = envelopes
      .map((envelope, index) => ({ envelope, index }))
      .filter(
        ({ envelope, index }) =>
          envelope.applicationId !== undefined &&
          knownOrganizations.has(envelope.organizationId) &&
          !writtenByIngest(sources[index].headers),
      );
    if (toResolve.length === 0) return envelopes;
    const found = await this.applications.findMany(
      toResolve.map(({ envelope }) => ({
        organizationId: envelope.organizationId,
        reference: envelope.applicationId!,
      })),
    );
    const resolved = [...envelopes];
    const unknown: RejectedRecord[] = [];
    for (const { envelope, index } of toResolve) {
      const application = findApplication(
        found.filter((a) => a.organizationId === envelope.organizationId),
        envelope.applicationId!,
      );
      if (application) {
        resolved[index] = { ...envelope, applicationId: application.id };
      } else {
        resolved[index] = { ...envelope, applicationId: UNKNOWN };
        unknown.push({ record: sources[index], reason: 'unknown application' });
      }
    }
    if (unknown.length > 0) await this.quarantine(unknown);
    this.metrics.eventsRefused('kafka', 'unknown_application', unknown.length);
    return resolved;
  }

  /**
   * Recipients are fixed when an event is accepted: the past routings of endpoints edited or
   * deleted since the oldest event of an organization whose routings changed after it was
   * accepted (none, and nothing read, in the usual case of no change since).
   */
  private async routingsSinceReplaced(
    envelopes: readonly EventEnvelope[],
    live: LiveRecipients,
    named: readonly string[] | undefined,
  ): Promise<RecipientEndpoint[]> {
    let since = Infinity;
    const organizationIds = new Set<string>();
    for (const { organizationId, acceptedAt } of envelopes) {
      const accepted = Date.parse(acceptedAt);
      if (accepted < (live.routingChangedAt.get(organizationId) ?? -Infinity)) {
        organizationIds.add(organizationId);
        since = Math.min(since, accepted);
      }
    }
    if (organizationIds.size === 0) return [];
    return this.recipients.pastRoutings([...organizationIds], new Date(since), named);
  }

  private async existingOrganizations(ids: readonly string[]): Promise<Set<string>> {
    const unique = new Set(ids);
    const unseen = [...unique].filter((id) => !this.knownOrganizations.has(id));
    const found =
      unseen.length > 0 ? await this.organizations.existingIds(unseen) : new Set<string>();
    const known = new Set(
      [...unique].filter((id) => this.knownOrganizations.has(id) || found.has(id)),
    );
    if (this.knownOrganizations.size + found.size > KNOWN_ORGANIZATIONS_MAX)
      this.knownOrganizations = new Set();
    for (const id of found) this.knownOrganizations.add(id);
    return known;
  }

  protected override async passOver(rejected: RejectedRecord[]): Promise<void> {
    await this.quarantine(rejected);
    this.metrics.eventsRefused('kafka', 'invalid_record', rejected.length);
  }

  /**
   * Records that cannot be accepted go to `<prefix>.events.invalid` (the original value, with the
   * reason and where it was read in headers) and are kept in PostgreSQL for the admin API, before
   * the batch's offsets are committed: nothing is dropped silently, and nothing stalls.
   */
  private async quarantine(rejected: RejectedRecord[]): Promise<void> {
    for (const { record, reason } of rejected) {
      this.logger.warn(
        `invalid event at partition ${record.partition} offset ${record.offset}: ${reason}`,
      );
    }
    await this.producer.send(
      this.topics.eventsInvalid,
      rejected.map(({ record, reason }) => ({
        key: record.key,
        value: record.value,
        headers: {
          'hookbase-reason': reason,
          'hookbase-source': `${this.topics.events}/${record.partition}/${record.offset}`,
        },
      })),
    );
    await this.invalid.record(
      rejected.map(({ record, reason }) => ({
        topic: this.topics.events,
        partition: record.partition,
        offset: record.offset,
        // Bad input is kept as an excerpt PostgreSQL can store, or it would stall this partition.
        key: record.key === null ? null : toStorableText(record.key),
        valueExcerpt: record.value
          ? toStorableText(record.value.toString('utf8').slice(0, VALUE_EXCERPT_CHARS))
          : null,
        reason,
      })),
    );
  }
}

/**
 * One `fan-out` span per event of a known organization, a child of the span its record's headers
 * carry (the publish), keyed by event id (a repeated event has one). Made only when the process
 * exports traces: without, the events go on without a trace, as those of unknown organizations do.
 */
function startEventTraces(
  arrivals: readonly Arrival[],
  known: ReadonlySet<string>,
): Map<string, EventTrace> {
  const traces = new Map<string, EventTrace>();
  for (const { envelope, source } of arrivals) {
    if (!known.has(envelope.organizationId) || traces.has(envelope.id)) continue;
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
