import { loadConfig } from '@hookbase/config';
import { DeliveryDecision, DlqReason } from '@hookbase/domain';
import {
  EndpointEntity,
  EndpointRepository,
  EventRepository,
  MessageRepository,
} from '@hookbase/persistence';
import { Attempts } from './attempt.service';
import { DeadLetters } from './dead-letter.service';
import { EventPayloads } from './event-payloads';
import { DeliveryService, PendingDelivery } from './delivery.service';
import { DispatchSlots, SlotOutcome } from './dispatch-pool';
import { DeliveryGuards, EndpointGuards, Refusal } from './endpoint-guards';

const endpointOf = (over: Partial<EndpointEntity> = {}) =>
  ({
    id: 'ep_1',
    organizationId: 'org_a',
    kind: 'http',
    url: 'http://127.0.0.1:1/never',
    config: {},
    status: 'active',
    deletedAt: null,
    retry: { delaysMs: [0], maxAgeMs: 60_000 },
    rateLimitPerSecond: null,
    fifoEnabled: false,
    ...over,
  }) as unknown as EndpointEntity;

const deliveryOf = (over: Partial<PendingDelivery> = {}): PendingDelivery => ({
  messageId: 'msg_1',
  webhookId: 'msg_1',
  source: 'new',
  eventId: 'evt_1',
  organizationId: 'org_a',
  endpointId: 'ep_1',
  eventType: 't',
  payload: {},
  acceptedAt: new Date(),
  attemptsMade: 0,
  ...over,
});

/** The coordinator with every collaborator replaced: the stores, guards, attempts, DLQ. */
function service(options: {
  endpoints?: EndpointEntity[];
  guards?: DeliveryGuards;
  outcome?: 'succeeded' | 'retry' | 'failed';
  attemptFails?: boolean;
  /** ep_1's signing secrets in the store (read at each read). */
  secrets?: string[];
  /** The events' payloads in the store, by event id (purged ones absent). */
  storedPayloads?: Record<string, Record<string, unknown>>;
}) {
  const held: { ids: readonly string[]; until: Date }[] = [];
  const inFlight: string[] = [];
  /** Attempts of stream messages begun (`id:attemptsBefore`) and, later, ended (`id ended`). */
  const marks: string[] = [];
  const attempted: string[] = [];
  const reported: string[] = [];
  const deadLettered: { ids: string[]; reason: DlqReason; status: string }[] = [];
  const messages = {
    claimForAttempt: async (ids: readonly string[]) => void inFlight.push(...ids),
    hold: async (ids: readonly string[], until: Date) => {
      if (ids.length > 0) held.push({ ids, until });
    },
    holdEach: async (holds: readonly { messageId: string; until: Date }[]) => {
      for (const { messageId, until } of holds) held.push({ ids: [messageId], until });
    },
  } as unknown as MessageRepository;
  /** The store's reads of the endpoints, each as the ids it asked for. */
  const reads: string[][] = [];
  const endpoints = {
    forDelivery: async (ids: readonly string[]) => {
      reads.push([...ids]);
      return {
        endpoints: new Map((options.endpoints ?? [endpointOf()]).map((e) => [e.id, e])),
        secrets: new Map([['ep_1', [...(options.secrets ?? ['whsec_x'])]]]),
      };
    },
  } as unknown as EndpointRepository;
  /** The store's reads of payloads, each as the event ids it asked for. */
  const payloadReads: string[][] = [];
  const events = {
    payloads: async (ids: readonly string[]) => {
      payloadReads.push([...ids]);
      const stored = options.storedPayloads ?? {};
      return new Map(ids.filter((id) => id in stored).map((id) => [id, stored[id]]));
    },
  } as unknown as EventRepository;
  /** The payload each attempt sent, by message id. */
  const sent = new Map<string, Record<string, unknown>>();
  const attempts: Attempts = {
    attempt: async (delivery, _endpoint, secrets) => {
      if (options.attemptFails) throw new Error('store gone');
      attempted.push(`${delivery.messageId}:${secrets.join(',')}`);
      sent.set(delivery.messageId, delivery.payload);
      const outcome = options.outcome ?? 'succeeded';
      return {
        outcome,
        decision: { status: 'succeeded' } as DeliveryDecision,
        recorded: Promise.resolve(),
      };
    },
  };
  const deadLetters: DeadLetters = {
    deadLetter: async (deliveries, reason, status) => {
      if (deliveries.length > 0) {
        deadLettered.push({ ids: deliveries.map((d) => d.messageId), reason, status });
      }
    },
  };
  const config = loadConfig({});
  const guards: DeliveryGuards = options.guards ?? {
    admit: async () => true,
    afterAttempt: (endpointId, outcome) => void reported.push(`${endpointId}:${outcome}`),
    withinConcurrency: async (_delivery, task) => task(),
  };
  const deliveries = new DeliveryService(
    config,
    endpoints,
    messages,
    new EventPayloads(events),
    guards,
    attempts,
    deadLetters,
    {
      begin: (messageId, attemptsBefore) => {
        marks.push(`${messageId}:${attemptsBefore}`);
        return () => void marks.push(`${messageId} ended`);
      },
    },
  );
  return {
    deliveries,
    held,
    inFlight,
    marks,
    attempted,
    reported,
    deadLettered,
    config,
    reads,
    payloadReads,
    sent,
  };
}

const refusing = (refusal: Refusal): DeliveryGuards => ({
  admit: async () => refusal,
  afterAttempt: () => {
    throw new Error('no attempt was made');
  },
  withinConcurrency: async (_delivery, task) => task(),
});

describe('DeliveryService', () => {
  it('reads the payloads of messages that came without theirs when their attempts are about to start, together, and sends nothing for a payload gone meanwhile', async () => {
    const { deliveries, payloadReads, sent, attempted, marks } = service({
      storedPayloads: { evt_1: { order: 1 }, evt_2: { order: 2 } },
    });
    await deliveries.deliver([
      deliveryOf({ messageId: 'msg_1', eventId: 'evt_1', payload: undefined }),
      deliveryOf({ messageId: 'msg_2', eventId: 'evt_2', payload: undefined }),
      deliveryOf({ messageId: 'msg_3', eventId: 'evt_1', payload: undefined }),
      deliveryOf({ messageId: 'msg_4', eventId: 'evt_purged', payload: undefined }),
      deliveryOf({ messageId: 'msg_5', eventId: 'evt_3', payload: { as: 'read' } }),
    ]);
    // One read for the four that came without, none for the one with its own.
    expect(payloadReads).toEqual([['evt_1', 'evt_2', 'evt_1', 'evt_purged']]);
    expect(Object.fromEntries(sent)).toEqual({
      msg_1: { order: 1 },
      msg_2: { order: 2 },
      msg_3: { order: 1 },
      msg_5: { as: 'read' },
    });
    // The purged event's message makes no attempt and begins none.
    expect(attempted).not.toContain('msg_4:whsec_x');
    expect(marks.filter((mark) => mark.startsWith('msg_4'))).toEqual([]);
  });

  it('claims scheduled messages in flight before their attempts, attempts each with its endpoint’s secrets, and reports the outcome to the guards', async () => {
    const { deliveries, inFlight, marks, attempted, reported, held, deadLettered } = service({
      outcome: 'retry',
    });
    await deliveries.deliver([
      deliveryOf({ source: 'scheduled', attemptsMade: 2 }),
      deliveryOf({ messageId: 'msg_2', source: 'scheduled' }),
    ]);
    expect(inFlight).toEqual(['msg_1', 'msg_2']);
    expect(marks).toEqual([]);
    expect(attempted).toEqual(['msg_1:whsec_x', 'msg_2:whsec_x']);
    expect(reported).toEqual(['ep_1:retry', 'ep_1:retry']);
    expect(held).toEqual([]);
    expect(deadLettered).toEqual([]);
  });

  it('writes nothing before the attempts of new messages: each attempt is begun and ended with the marks, even when it throws', async () => {
    const { deliveries, inFlight, marks, attempted } = service({});
    await deliveries.deliver([deliveryOf(), deliveryOf({ messageId: 'msg_2', attemptsMade: 1 })]);
    expect(inFlight).toEqual([]);
    expect(attempted).toEqual(['msg_1:whsec_x', 'msg_2:whsec_x']);
    expect(marks).toEqual(['msg_1:0', 'msg_2:1', 'msg_1 ended', 'msg_2 ended']);

    const failing = service({ attemptFails: true });
    await expect(failing.deliveries.deliver([deliveryOf()])).rejects.toThrow('store gone');
    expect(failing.marks).toEqual(['msg_1:0', 'msg_1 ended']);
  });

  it('delivers with endpoints read earlier when given them, without reading again', async () => {
    // Read now, the store has no endpoint (the message would be dead-lettered as deleted); the
    // read given, started earlier, has it.
    const { deliveries, attempted, deadLettered } = service({ endpoints: [] });
    const given = Promise.resolve({
      endpoints: new Map([['ep_1', endpointOf()]]),
      secrets: new Map([['ep_1', ['whsec_given']]]),
      at: new Date(),
    });
    const sends = await deliveries.start([deliveryOf()], given);
    await Promise.all(sends.values());
    expect(attempted).toEqual(['msg_1:whsec_given']);
    expect(deadLettered).toEqual([]);
  });

  it('settles what cannot go now without an attempt: gone, held, held too long', async () => {
    const { deliveries, held, inFlight, attempted, deadLettered, config } = service({
      endpoints: [
        endpointOf({ id: 'ep_paused', status: 'paused' }),
        endpointOf({ id: 'ep_deleted', deletedAt: new Date() }),
      ],
    });
    const before = Date.now();
    await deliveries.deliver([
      deliveryOf({ messageId: 'gone', endpointId: 'ep_unknown' }),
      deliveryOf({ messageId: 'deleted', endpointId: 'ep_deleted' }),
      deliveryOf({ messageId: 'paused', endpointId: 'ep_paused' }),
      deliveryOf({
        messageId: 'too_old',
        endpointId: 'ep_paused',
        acceptedAt: new Date(Date.now() - 60_001),
      }),
    ]);
    expect(deadLettered).toEqual([
      { ids: ['gone', 'deleted'], reason: 'endpoint_deleted', status: 'cancelled' },
      { ids: ['too_old'], reason: 'max_age', status: 'expired' },
    ]);
    expect(held).toHaveLength(1);
    expect(held[0].ids).toEqual(['paused']);
    expect(held[0].until.getTime()).toBeGreaterThanOrEqual(before + config.delivery.holdRecheckMs);
    expect(inFlight).toEqual([]);
    expect(attempted).toEqual([]);
  });

  describe('a message that waited for its slot', () => {
    beforeEach(() => jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick'] }));
    afterEach(() => jest.useRealTimers());

    /** Guards that let each message's attempt start only after `waitMs` have passed. */
    function waitingGuards(waitMs: number): DeliveryGuards {
      return {
        admit: async () => true,
        afterAttempt: () => undefined,
        withinConcurrency: async (_delivery, task) => {
          jest.setSystemTime(Date.now() + waitMs);
          return task();
        },
      };
    }

    it('goes by its endpoint as it is now: deleted, it is cancelled without an attempt', async () => {
      const store = [endpointOf()];
      const { deliveries, attempted, deadLettered, reads } = service({
        endpoints: store,
        guards: {
          ...waitingGuards(300),
          withinConcurrency: async (_delivery, task) => {
            // Deleted while the message waited.
            store[0] = endpointOf({ deletedAt: new Date() });
            jest.setSystemTime(Date.now() + 300);
            return task();
          },
        },
      });
      await deliveries.deliver([deliveryOf()]);
      expect(reads).toEqual([['ep_1'], ['ep_1']]);
      expect(attempted).toEqual([]);
      expect(deadLettered).toEqual([
        { ids: ['msg_1'], reason: 'endpoint_deleted', status: 'cancelled' },
      ]);
    });

    it('is held when its endpoint was paused meanwhile', async () => {
      const store = [endpointOf()];
      const { deliveries, attempted, held } = service({
        endpoints: store,
        guards: {
          ...waitingGuards(0),
          withinConcurrency: async (_delivery, task) => {
            store[0] = endpointOf({ status: 'paused' });
            jest.setSystemTime(Date.now() + 251);
            return task();
          },
        },
      });
      await deliveries.deliver([deliveryOf()]);
      expect(attempted).toEqual([]);
      expect(held.map((h) => h.ids)).toEqual([['msg_1']]);
    });

    it('is signed with the secrets the endpoint has now', async () => {
      const secrets = ['whsec_old'];
      const { deliveries, attempted } = service({
        secrets,
        guards: {
          ...waitingGuards(0),
          withinConcurrency: async (_delivery, task) => {
            secrets.splice(0, 1, 'whsec_new');
            jest.setSystemTime(Date.now() + 1_000);
            return task();
          },
        },
      });
      await deliveries.deliver([deliveryOf()]);
      expect(attempted).toEqual(['msg_1:whsec_new']);
    });

    it('reads the endpoints of messages that waited together in one read', async () => {
      const { deliveries, attempted, reads } = service({ guards: waitingGuards(300) });
      await deliveries.deliver([deliveryOf(), deliveryOf({ messageId: 'msg_2' })]);
      // Two reads in all: the group's, and one again for both.
      expect(reads).toEqual([['ep_1'], ['ep_1']]);
      expect(attempted).toEqual(['msg_1:whsec_x', 'msg_2:whsec_x']);
    });

    it('goes by a newer read of its endpoint, made meanwhile for other messages, without reading it again', async () => {
      const secrets = ['whsec_old'];
      const { deliveries, attempted, reads } = service({
        secrets,
        guards: {
          ...waitingGuards(0),
          withinConcurrency: async (_delivery, task) => {
            jest.setSystemTime(Date.now() + 300);
            // Another intake reads the endpoint, with its secret rotated meanwhile.
            secrets.splice(0, 1, 'whsec_new');
            await deliveries.readEndpoints(['ep_1']);
            jest.setSystemTime(Date.now() + 200);
            return task();
          },
        },
      });
      await deliveries.deliver([deliveryOf()]);
      expect(reads).toEqual([['ep_1'], ['ep_1']]);
      expect(attempted).toEqual(['msg_1:whsec_new']);
    });

    it('reads it again when the newer read is older than 250 ms too', async () => {
      const { deliveries, attempted, reads } = service({
        guards: {
          ...waitingGuards(0),
          withinConcurrency: async (_delivery, task) => {
            jest.setSystemTime(Date.now() + 300);
            await deliveries.readEndpoints(['ep_1']);
            jest.setSystemTime(Date.now() + 251);
            return task();
          },
        },
      });
      await deliveries.deliver([deliveryOf()]);
      expect(reads).toEqual([['ep_1'], ['ep_1'], ['ep_1']]);
      expect(attempted).toEqual(['msg_1:whsec_x']);
    });

    it('counts a read given versions from the time those were read', async () => {
      const { deliveries, reads } = service({ guards: waitingGuards(0) });
      const versionsAt = new Date(Date.now() - 300);
      const sends = await deliveries.start(
        [deliveryOf()],
        deliveries.readEndpoints(['ep_1'], [], versionsAt),
      );
      await Promise.all(sends.values());
      // The versions were 300 ms old: the endpoint is read again before the attempt.
      expect(reads).toEqual([['ep_1'], ['ep_1']]);
    });

    it('is not read again when its slot came within 250 ms', async () => {
      const { deliveries, attempted, reads } = service({ guards: waitingGuards(250) });
      await deliveries.deliver([deliveryOf()]);
      expect(reads).toEqual([['ep_1']]);
      expect(attempted).toEqual(['msg_1:whsec_x']);
    });
  });

  it('skips a new message meeting an open circuit into the DLQ, without an attempt', async () => {
    const until = new Date(Date.now() + 30_000);
    const { deliveries, held, attempted, deadLettered } = service({
      guards: refusing({ reason: 'circuit_open', until }),
    });
    await deliveries.deliver([deliveryOf()]);
    expect(deadLettered).toEqual([{ ids: ['msg_1'], reason: 'circuit_open', status: 'skipped' }]);
    expect(held).toEqual([]);
    expect(attempted).toEqual([]);
  });

  it('holds a scheduled copy meeting an open circuit until the guards’ time', async () => {
    const until = new Date(Date.now() + 30_000);
    const { deliveries, held, attempted, deadLettered } = service({
      guards: refusing({ reason: 'circuit_open', until }),
    });
    await deliveries.deliver([deliveryOf({ source: 'scheduled' })]);
    expect(held).toEqual([{ ids: ['msg_1'], until }]);
    expect(deadLettered).toEqual([]);
    expect(attempted).toEqual([]);
  });

  it.each(['new', 'scheduled'] as const)(
    'holds a rate-limited %s message until its token',
    async (source) => {
      const until = new Date(Date.now() + 5_000);
      const { deliveries, held, attempted } = service({
        guards: refusing({ reason: 'rate_limited', until }),
      });
      await deliveries.deliver([deliveryOf({ source })]);
      expect(held).toEqual([{ ids: ['msg_1'], until }]);
      expect(attempted).toEqual([]);
    },
  );

  it('returns each started send by message id, and nothing for an empty group', async () => {
    const { deliveries } = service({});
    expect((await deliveries.start([])).size).toBe(0);
    const sends = await deliveries.start([deliveryOf(), deliveryOf({ messageId: 'msg_2' })]);
    expect([...sends.keys()]).toEqual(['msg_1', 'msg_2']);
    await Promise.all(sends.values());
  });

  it('throws before any attempt when the management store cannot be read', async () => {
    const { deliveries, attempted } = service({});
    (deliveries as unknown as { endpoints: EndpointRepository }).endpoints.forDelivery =
      async () => {
        throw new Error('store down');
      };
    await expect(deliveries.deliver([deliveryOf()])).rejects.toThrow('store down');
    expect(attempted).toEqual([]);
  });
});

/**
 * DeliveryService's use of its dispatch slots through the real guards, with the slots replaced:
 * which organization a message asks for, and what happens when its organization's share has no
 * room.
 */
describe('DeliveryService and its dispatch slots', () => {
  const withSlots = (slots: DispatchSlots) =>
    service({ guards: new EndpointGuards(loadConfig({}), slots) });

  it('asks for a slot of the message’s organization and attempts in it', async () => {
    const asked: string[] = [];
    const slots: DispatchSlots = {
      run: (_organizationId, task) => task(),
      runWithinShare: async <T>(organizationId: string, task: () => Promise<T>) => {
        asked.push(organizationId);
        return { ran: true, value: await task() } as SlotOutcome<T>;
      },
    };
    const { deliveries, held, attempted } = withSlots(slots);
    await deliveries.deliver([deliveryOf()]);
    expect(asked).toEqual(['org_a']);
    expect(attempted).toHaveLength(1);
    expect(held).toEqual([]);
  });

  it('holds the message on the retry schedule, without an attempt, when its share has no room', async () => {
    const slots: DispatchSlots = {
      run: (_organizationId, task) => task(),
      runWithinShare: async () => ({ ran: false }),
    };
    const { deliveries, held, attempted } = withSlots(slots);
    const before = Date.now();
    await deliveries.deliver([deliveryOf()]);
    expect(attempted).toEqual([]);
    expect(held).toHaveLength(1);
    expect(held[0].ids).toEqual(['msg_1']);
    expect(held[0].until.getTime()).toBeGreaterThanOrEqual(before + 1_000);
  });
});
