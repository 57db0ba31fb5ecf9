import { EventEnvelope, RecipientEndpoint } from '@hookbase/domain';
import type { LiveRecipients, RecipientVersions, RecordedMessage } from '@hookbase/persistence';
import {
  EventRecords,
  RecipientReads,
  RecordEventMessages,
} from './record-event-messages.use-case';

const T = Date.parse('2026-06-01T10:00:00.000Z');

const endpoint = (id: string, over: Partial<RecipientEndpoint> = {}): RecipientEndpoint => ({
  id,
  organizationId: 'org_a',
  kind: 'http',
  status: 'active',
  eventTypes: [],
  channels: [],
  filter: null,
  applicationId: null,
  retry: null,
  createdAt: T - 60_000,
  ...over,
});

const envelope = (id: string, over: Partial<EventEnvelope> = {}): EventEnvelope => ({
  id,
  organizationId: 'org_a',
  eventType: 'order.created',
  payload: {},
  acceptedAt: new Date(T).toISOString(),
  ...over,
});

/** Scripted reads and records that note every call. */
function harness(options: {
  kept?: LiveRecipients & { versions: RecipientVersions };
  live?: LiveRecipients;
  past?: RecipientEndpoint[];
  /** Whether a record against versions finds them current. */
  versionsHold?: boolean;
}) {
  const calls: string[] = [];
  const pastAsked: {
    organizationIds: readonly string[];
    since: Date;
    onlyIds?: readonly string[];
  }[] = [];
  const liveAsked: { organizationIds: readonly string[]; onlyIds?: readonly string[] }[] = [];
  const reads: RecipientReads = {
    keptRecipients: () => {
      calls.push('kept');
      return options.kept;
    },
    liveRecipients: async (organizationIds, onlyIds) => {
      calls.push('live');
      liveAsked.push({ organizationIds, onlyIds });
      return options.live ?? { recipients: [], routingChangedAt: new Map() };
    },
    pastRoutings: async (organizationIds, since, onlyIds) => {
      calls.push('past');
      pastAsked.push({ organizationIds, since, onlyIds });
      return options.past ?? [];
    },
  };
  const records: EventRecords = {
    recordEvents: async (envelopes, planned, _traceParents, plannedFor) => {
      calls.push(plannedFor ? 'record-if-current' : 'record');
      if (plannedFor && !options.versionsHold) return undefined;
      const byEvent = new Map<string, RecordedMessage[]>(envelopes.map((e) => [e.id, []]));
      for (const m of planned) {
        byEvent.get(m.eventId)!.push({
          messageId: m.messageId,
          eventId: m.eventId,
          endpointId: m.endpointId,
          polled: m.polled,
        });
      }
      return byEvent;
    },
  };
  const useCase = new RecordEventMessages(reads, records);
  const run = async (envelopes: EventEnvelope[]) => {
    const recorded = await useCase.execute({
      envelopes,
      operational: new Set(),
      traceParents: new Map(),
    });
    return Object.fromEntries(
      [...recorded].map(([eventId, messages]) => [eventId, messages.map((m) => m.endpointId)]),
    );
  };
  return { run, calls, pastAsked, liveAsked };
}

const versions: RecipientVersions = { organizationIds: ['org_a'], versions: ['v1'] };
const unchanged = new Map([['org_a', -Infinity]]);

describe('RecordEventMessages', () => {
  it('records against the kept recipients in one round trip while their versions hold', async () => {
    const h = harness({
      kept: { recipients: [endpoint('ep_1')], routingChangedAt: unchanged, versions },
      versionsHold: true,
    });
    expect(await h.run([envelope('evt_1')])).toEqual({ evt_1: ['ep_1'] });
    expect(h.calls).toEqual(['kept', 'record-if-current']);
  });

  it('reads the recipients again and records by them when a kept version moved', async () => {
    const h = harness({
      kept: { recipients: [endpoint('ep_old')], routingChangedAt: unchanged, versions },
      live: { recipients: [endpoint('ep_new')], routingChangedAt: unchanged },
      versionsHold: false,
    });
    expect(await h.run([envelope('evt_1')])).toEqual({ evt_1: ['ep_new'] });
    expect(h.calls).toEqual(['kept', 'record-if-current', 'live', 'record']);
  });

  it('reads the recipients when none are kept', async () => {
    const h = harness({ live: { recipients: [endpoint('ep_1')], routingChangedAt: unchanged } });
    expect(await h.run([envelope('evt_1')])).toEqual({ evt_1: ['ep_1'] });
    expect(h.calls).toEqual(['kept', 'live', 'record']);
  });

  it('reads only the named endpoints when every event names its own, and keeps nothing', async () => {
    const h = harness({ live: { recipients: [endpoint('ep_2')], routingChangedAt: unchanged } });
    const recorded = await h.run([
      envelope('evt_1', { endpointIds: ['ep_2'] }),
      envelope('evt_2', { endpointIds: ['ep_2', 'ep_3'] }),
    ]);
    expect(recorded).toEqual({ evt_1: ['ep_2'], evt_2: ['ep_2'] });
    expect(h.calls).toEqual(['live', 'record']);
    expect(h.liveAsked).toEqual([{ organizationIds: ['org_a'], onlyIds: ['ep_2', 'ep_3'] }]);
  });

  describe('recipients fixed at acceptance', () => {
    const changedAt = T + 1_000;
    const live: LiveRecipients = {
      recipients: [endpoint('ep_kept'), endpoint('ep_b', { organizationId: 'org_b' })],
      routingChangedAt: new Map([
        ['org_a', changedAt],
        ['org_b', -Infinity],
      ]),
    };
    // ep_gone was deleted at changedAt.
    const past = [endpoint('ep_gone', { replacedAt: changedAt })];

    it("reads the past routings of an event's organization changed after its acceptance", async () => {
      const h = harness({ live, past });
      const recorded = await h.run([
        envelope('evt_later', { acceptedAt: new Date(changedAt + 5).toISOString() }),
        envelope('evt_early', { acceptedAt: new Date(T - 10).toISOString() }),
        envelope('evt_b', { organizationId: 'org_b' }),
        envelope('evt_early_too', { acceptedAt: new Date(T).toISOString() }),
      ]);
      expect(recorded).toEqual({
        evt_later: ['ep_kept'],
        evt_early: ['ep_kept', 'ep_gone'],
        evt_b: ['ep_b'],
        evt_early_too: ['ep_kept', 'ep_gone'],
      });
      // Once, for the organization that changed, since its oldest event.
      expect(h.pastAsked).toEqual([
        { organizationIds: ['org_a'], since: new Date(T - 10), onlyIds: undefined },
      ]);
    });

    it('reads nothing more when every event came after the change', async () => {
      const h = harness({ live, past });
      await h.run([envelope('evt_later', { acceptedAt: new Date(changedAt).toISOString() })]);
      expect(h.calls).toEqual(['kept', 'live', 'record']);
    });

    it('asks for the named endpoints only when the events name them', async () => {
      const h = harness({ live, past });
      await h.run([
        envelope('evt_named', { endpointIds: ['ep_gone'], acceptedAt: new Date(T).toISOString() }),
      ]);
      expect(h.pastAsked).toEqual([
        { organizationIds: ['org_a'], since: new Date(T), onlyIds: ['ep_gone'] },
      ]);
    });

    it('uses the change time kept with the recipients, before recording against them', async () => {
      const h = harness({ kept: { ...live, versions }, past, versionsHold: true });
      expect(await h.run([envelope('evt_early')])).toEqual({ evt_early: ['ep_kept', 'ep_gone'] });
      expect(h.calls).toEqual(['kept', 'past', 'record-if-current']);
    });
  });
});
