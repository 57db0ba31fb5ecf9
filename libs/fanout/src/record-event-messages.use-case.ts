import { Inject, Injectable } from '@nestjs/common';
import { EventEnvelope, planMessages, RecipientEndpoint } from '@hookbase/domain';
import {
  EventRepository,
  type LiveRecipients,
  RecipientRepository,
  type RecipientVersions,
  type RecordedMessage,
} from '@hookbase/persistence';

/** The recipients' reads the use case makes (RecipientRepository's), so a test can replace them. */
export type RecipientReads = Pick<
  RecipientRepository,
  'keptRecipients' | 'liveRecipients' | 'pastRoutings'
>;

/** The record of events and their messages (EventRepository's), so a test can replace it. */
export interface EventRecords {
  recordEvents(
    envelopes: readonly EventEnvelope[],
    planned: ReturnType<typeof planMessages>,
    traceParents: ReadonlyMap<string, string | null>,
    plannedFor?: RecipientVersions,
  ): Promise<Map<string, RecordedMessage[]> | undefined>;
}

/** Nest tokens for the use case's collaborators. */
export const RECIPIENT_READS = Symbol('RECIPIENT_READS');
export const EVENT_RECORDS = Symbol('EVENT_RECORDS');

/** What to record: admitted events, in order, and what the fan-out knows of each. */
export interface RecordEventMessagesCommand {
  envelopes: readonly EventEnvelope[];
  /** Events written by Hookbase as operational events: only they reach operational endpoints. */
  operational: ReadonlySet<string>;
  /** Each event's fan-out trace context, kept for the attempts that start from the store. */
  traceParents: ReadonlyMap<string, string | null>;
}

/**
 * Resolves each event's recipients once, as they were when it was accepted, and records the
 * events with one message per recipient (ADR 0002), answering every event's messages (those an
 * event already had when it was recorded before included). Recording is idempotent, so a batch
 * read again after a crash gets the same message ids for the same recipients.
 */
@Injectable()
export class RecordEventMessages {
  constructor(
    @Inject(RECIPIENT_READS) private readonly recipients: RecipientReads,
    @Inject(EVENT_RECORDS) private readonly events: EventRecords,
  ) {}

  async execute(command: RecordEventMessagesCommand): Promise<Map<string, RecordedMessage[]>> {
    const { envelopes, operational, traceParents } = command;
    // When every event names its endpoints (as FIFO producers often do), only those are read, not
    // every endpoint of their organizations.
    const named = envelopes.every((envelope) => envelope.endpointIds !== undefined)
      ? [...new Set(envelopes.flatMap((envelope) => envelope.endpointIds!))]
      : undefined;
    const organizationIds = [...new Set(envelopes.map((envelope) => envelope.organizationId))];
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
      kept &&
      (await this.events.recordEvents(envelopes, await planFor(kept), traceParents, kept.versions));
    if (recorded) return recorded;
    const live = await this.recipients.liveRecipients(organizationIds, named);
    return (await this.events.recordEvents(envelopes, await planFor(live), traceParents))!;
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
}

/** The use case's collaborators, as the fan-out module provides them. */
export const RECORD_EVENT_MESSAGES_PROVIDERS = [
  { provide: RECIPIENT_READS, useExisting: RecipientRepository },
  { provide: EVENT_RECORDS, useExisting: EventRepository },
  RecordEventMessages,
];
