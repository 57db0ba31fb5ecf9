import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { EventEnvelope, findApplication, toStorableText } from '@hookbase/domain';
import {
  ConsumedRecord,
  KafkaProducer,
  RejectedRecord,
  TopicNames,
  TOPICS,
  writtenByIngest,
} from '@hookbase/kafka';
import {
  ApplicationRepository,
  EventTypeCatalog,
  InvalidEventRepository,
  OrganizationRepository,
} from '@hookbase/persistence';
import { FanoutMetrics, IngestMetrics, METRICS, NO_METRICS } from '@hookbase/runtime';

/** An event envelope as read, with where it was read. */
export interface Arrival {
  envelope: EventEnvelope;
  source: ConsumedRecord;
}

/** Why a record was set aside, as the refusals metric counts it. */
export type SetAsideReason =
  'invalid_record' | 'unknown_organization' | 'unknown_application' | 'event_type_policy';

const VALUE_EXCERPT_CHARS = 2_000;

/** Organizations remembered as existing, at most; past it the memory starts over. */
const KNOWN_ORGANIZATIONS_MAX = 100_000;

/**
 * Decides which of the events read from `<prefix>.events` the fan-out takes, and sets the others
 * aside. Ingest admitted its own events before it accepted them; records written straight onto the
 * topic are admitted here: their organization must exist, their application (by id or uid) must be
 * one of its own, and their organization's event type policy must accept them. A record set aside
 * goes to `<prefix>.events.invalid` with its reason and is kept in PostgreSQL for the admin API,
 * before the batch's offsets are committed: nothing is dropped silently, and nothing stalls.
 */
@Injectable()
export class EnvelopeAdmission {
  private readonly logger = new Logger(EnvelopeAdmission.name);
  /**
   * Organizations found to exist. Organizations are never deleted, so a found one stays found and
   * is not asked for again; one not found is asked for again with its next event.
   */
  private knownOrganizations = new Set<string>();

  constructor(
    @Inject(TOPICS) private readonly topics: TopicNames,
    private readonly producer: KafkaProducer,
    private readonly organizations: OrganizationRepository,
    private readonly invalid: InvalidEventRepository,
    private readonly catalog: EventTypeCatalog,
    private readonly applications: ApplicationRepository,
    @Optional()
    @Inject(METRICS)
    private readonly metrics: FanoutMetrics & IngestMetrics = NO_METRICS,
  ) {}

  /**
   * The arrivals the fan-out takes, in the order read, each with its application resolved to its
   * id; the others are set aside first.
   */
  async admit(arrivals: readonly Arrival[]): Promise<Arrival[]> {
    const read = arrivals.map((a) => a.envelope);
    const sources = arrivals.map((a) => a.source);
    // Direct producers may name an organization that does not exist: such events go aside too.
    const known = await this.existingOrganizations(read.map((e) => e.organizationId));
    await this.setAside(
      sources
        .filter((_, i) => !known.has(read[i].organizationId))
        .map((record) => ({ record, reason: 'unknown organization' })),
      'unknown_organization',
    );
    // And an application by uid, or one their organization does not have: resolved to its id, or
    // set aside like an unknown organization. Those of no known organization stay as they are.
    const { resolved, unknownApplication } = await this.withApplicationIds(read, sources, known);
    // Ingest admitted its own events against the organization's event type policy; those of
    // direct producers are admitted here, and refused ones go aside with the reason.
    const refusals = await this.refusedByPolicy(resolved, sources, known, unknownApplication);
    await this.setAside(
      [...refusals].map(([index, reason]) => ({ record: sources[index], reason })),
      'event_type_policy',
    );
    return resolved.flatMap((envelope, i) =>
      known.has(envelope.organizationId) && !unknownApplication.has(i) && !refusals.has(i)
        ? [{ envelope, source: sources[i] }]
        : [],
    );
  }

  /**
   * Sets records aside: to `<prefix>.events.invalid` (the original value, with the reason and
   * where it was read in headers) and into PostgreSQL for the admin API, counted by `reason`.
   */
  async setAside(rejected: readonly RejectedRecord[], reason: SetAsideReason): Promise<void> {
    this.metrics.eventsRefused('kafka', reason, rejected.length);
    if (rejected.length === 0) return;
    for (const { record, reason: why } of rejected) {
      this.logger.warn(
        `invalid event at partition ${record.partition} offset ${record.offset}: ${why}`,
      );
    }
    await this.producer.send(
      this.topics.eventsInvalid,
      rejected.map(({ record, reason: why }) => ({
        key: record.key,
        value: record.value,
        headers: {
          'hookbase-reason': why,
          'hookbase-source': `${this.topics.events}/${record.partition}/${record.offset}`,
        },
      })),
    );
    await this.invalid.record(
      rejected.map(({ record, reason: why }) => ({
        topic: this.topics.events,
        partition: record.partition,
        offset: record.offset,
        // Bad input is kept as an excerpt PostgreSQL can store, or it would stall this partition.
        key: record.key === null ? null : toStorableText(record.key),
        valueExcerpt: record.value
          ? toStorableText(record.value.toString('utf8').slice(0, VALUE_EXCERPT_CHARS))
          : null,
        reason: why,
      })),
    );
  }

  /** The events of direct producers that their organization's policy refuses, by index. */
  private async refusedByPolicy(
    all: readonly EventEnvelope[],
    sources: readonly ConsumedRecord[],
    known: ReadonlySet<string>,
    setAside: ReadonlySet<number>,
  ): Promise<Map<number, string>> {
    const refusals = new Map<number, string>();
    for (let i = 0; i < all.length; i++) {
      const envelope = all[i];
      if (
        !known.has(envelope.organizationId) ||
        setAside.has(i) ||
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
   * id, and the indexes of those whose organization does not have it, set aside. Ingest resolved
   * its own envelopes' applications already: those are taken as they are.
   */
  private async withApplicationIds(
    envelopes: readonly EventEnvelope[],
    sources: readonly ConsumedRecord[],
    knownOrganizations: ReadonlySet<string>,
  ): Promise<{ resolved: EventEnvelope[]; unknownApplication: Set<number> }> {
    const resolved = [...envelopes];
    const unknownApplication = new Set<number>();
    const toResolve = envelopes
      .map((envelope, index) => ({ envelope, index }))
      .filter(
        ({ envelope, index }) =>
          envelope.applicationId !== undefined &&
          knownOrganizations.has(envelope.organizationId) &&
          !writtenByIngest(sources[index].headers),
      );
    if (toResolve.length === 0) return { resolved, unknownApplication };
    const found = await this.applications.findMany(
      toResolve.map(({ envelope }) => ({
        organizationId: envelope.organizationId,
        reference: envelope.applicationId!,
      })),
    );
    const unknown: RejectedRecord[] = [];
    for (const { envelope, index } of toResolve) {
      const application = findApplication(
        found.filter((a) => a.organizationId === envelope.organizationId),
        envelope.applicationId!,
      );
      if (application) {
        resolved[index] = { ...envelope, applicationId: application.id };
      } else {
        unknownApplication.add(index);
        unknown.push({ record: sources[index], reason: 'unknown application' });
      }
    }
    await this.setAside(unknown, 'unknown_application');
    return { resolved, unknownApplication };
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
}
