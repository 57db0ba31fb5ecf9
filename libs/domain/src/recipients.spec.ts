import fc from 'fast-check';
import { compileFilter } from './event-filter';
import {
  endpointReceives,
  EVENT_TYPE_SUBSCRIPTION_PATTERN,
  eventTypeMatches,
  EventToFanOut,
  matchRecipients,
  planMessages,
  RecipientCandidate,
  RecipientEndpoint,
} from './recipients';

const endpoint = (id: string, overrides: Partial<RecipientCandidate> = {}): RecipientCandidate => ({
  id,
  status: 'active',
  eventTypes: [],
  deleted: false,
  ...overrides,
});

describe('matchRecipients', () => {
  it('sends every type to endpoints with no filter and only listed types to the others', () => {
    const all = endpoint('all');
    const orders = endpoint('orders', { eventTypes: ['order.created', 'order.updated'] });
    const users = endpoint('users', { eventTypes: ['user.created'] });
    expect(matchRecipients([all, orders, users], { eventType: 'order.created' })).toEqual([
      all,
      orders,
    ]);
  });

  it('includes paused endpoints and leaves out disabled and deleted ones', () => {
    const paused = endpoint('paused', { status: 'paused' });
    const disabled = endpoint('disabled', { status: 'disabled' });
    const deleted = endpoint('deleted', { deleted: true });
    expect(matchRecipients([paused, disabled, deleted], { eventType: 'x' })).toEqual([paused]);
  });

  it('narrows to the endpoint ids given with the event, still applying the other rules', () => {
    const a = endpoint('a');
    const b = endpoint('b');
    const c = endpoint('c', { eventTypes: ['other'] });
    expect(matchRecipients([a, b, c], { eventType: 'x', endpointIds: ['b', 'c'] })).toEqual([b]);
  });

  it("keeps an application's event to its endpoints and an event of none to endpoints of none", () => {
    const own = endpoint('own');
    const ofA = endpoint('a', { applicationId: 'app_a' });
    const ofB = endpoint('b', { applicationId: 'app_b' });
    expect(matchRecipients([own, ofA, ofB], { eventType: 'x' })).toEqual([own]);
    expect(matchRecipients([own, ofA, ofB], { eventType: 'x', applicationId: null })).toEqual([
      own,
    ]);
    expect(matchRecipients([own, ofA, ofB], { eventType: 'x', applicationId: 'app_a' })).toEqual([
      ofA,
    ]);
    // Naming another application's endpoint does not reach it.
    expect(
      matchRecipients([own, ofA, ofB], {
        eventType: 'x',
        applicationId: 'app_a',
        endpointIds: ['b', 'own'],
      }),
    ).toEqual([]);
  });

  it('resolves to nobody when nothing subscribes', () => {
    expect(matchRecipients([], { eventType: 'x' })).toEqual([]);
  });
});

describe('planMessages', () => {
  const live = (id: string, overrides: Partial<RecipientEndpoint> = {}): RecipientEndpoint => ({
    id,
    organizationId: 'org_a',
    kind: 'http',
    status: 'active',
    eventTypes: [],
    channels: [],
    filter: null,
    applicationId: null,
    retry: null,
    ...overrides,
  });
  const event = (id: string, overrides: Partial<EventToFanOut> = {}): EventToFanOut => ({
    id,
    organizationId: 'org_a',
    eventType: 'order.created',
    ...overrides,
  });
  const counter = () => {
    let next = 0;
    return () => `msg_${next++}`;
  };

  it('makes one message per recipient, in event order, then endpoint order', () => {
    const endpoints = [live('ep_1'), live('ep_2', { eventTypes: ['user.created'] }), live('ep_3')];
    const events = [event('evt_1'), event('evt_2', { eventType: 'user.created' })];
    expect(planMessages(events, endpoints, counter())).toEqual([
      {
        messageId: 'msg_0',
        eventId: 'evt_1',
        organizationId: 'org_a',
        endpointId: 'ep_1',
        eventType: 'order.created',
        maxAttempts: 5,
        polled: false,
      },
      expect.objectContaining({ messageId: 'msg_1', eventId: 'evt_1', endpointId: 'ep_3' }),
      expect.objectContaining({ messageId: 'msg_2', eventId: 'evt_2', endpointId: 'ep_1' }),
      expect.objectContaining({ messageId: 'msg_3', eventId: 'evt_2', endpointId: 'ep_2' }),
      expect.objectContaining({ messageId: 'msg_4', eventId: 'evt_2', endpointId: 'ep_3' }),
    ]);
  });

  it('leaves out endpoints created after the event was accepted, however late it is fanned out', () => {
    const accepted = Date.parse('2026-06-01T10:00:00.000Z');
    const endpoints = [
      live('ep_before', { createdAt: accepted - 1 }),
      live('ep_same_moment', { createdAt: accepted }),
      live('ep_after', { createdAt: accepted + 1 }),
      live('ep_unknown'),
      live('ep_other_org', { organizationId: 'org_b', createdAt: accepted + 60_000 }),
    ];
    const planned = planMessages(
      [
        event('evt_a', { acceptedAt: new Date(accepted).toISOString() }),
        event('evt_named', {
          acceptedAt: new Date(accepted).toISOString(),
          endpointIds: ['ep_after', 'ep_before'],
        }),
        event('evt_b', { organizationId: 'org_b', acceptedAt: new Date(accepted).toISOString() }),
        // A later event reaches them all.
        event('evt_later', { acceptedAt: new Date(accepted + 5).toISOString() }),
        // Without its acceptance time (an older record), every live endpoint.
        event('evt_untimed'),
      ],
      endpoints,
      counter(),
    );
    expect(planned.map((m) => `${m.eventId} ${m.endpointId}`)).toEqual([
      'evt_a ep_before',
      'evt_a ep_same_moment',
      'evt_a ep_unknown',
      'evt_named ep_before',
      'evt_later ep_before',
      'evt_later ep_same_moment',
      'evt_later ep_after',
      'evt_later ep_unknown',
      'evt_untimed ep_before',
      'evt_untimed ep_same_moment',
      'evt_untimed ep_after',
      'evt_untimed ep_unknown',
    ]);
  });

  describe('routings replaced after the event was accepted', () => {
    const replaced = Date.parse('2026-06-01T10:00:00.000Z');
    const at = (ms: number) => new Date(ms).toISOString();
    // ep_edited took order.* until `replaced`, user.created since; ep_deleted was deleted then.
    const endpoints = [
      live('ep_edited', { eventTypes: ['user.created'] }),
      live('ep_kept'),
      live('ep_edited', { eventTypes: ['order.*'], replacedAt: replaced }),
      live('ep_deleted', { replacedAt: replaced }),
    ];
    const plan = (events: EventToFanOut[]) =>
      planMessages(events, endpoints, counter()).map((m) => `${m.eventId} ${m.endpointId}`);

    it('routes an event accepted before a change by the routing in force then', () => {
      expect(
        plan([
          event('evt_order_before', { acceptedAt: at(replaced - 1) }),
          event('evt_user_before', { eventType: 'user.created', acceptedAt: at(replaced - 1) }),
          event('evt_order_after', { acceptedAt: at(replaced + 1) }),
          event('evt_user_after', { eventType: 'user.created', acceptedAt: at(replaced + 1) }),
        ]),
      ).toEqual([
        'evt_order_before ep_edited',
        'evt_order_before ep_kept',
        'evt_order_before ep_deleted',
        'evt_user_before ep_kept',
        'evt_user_before ep_deleted',
        'evt_order_after ep_kept',
        'evt_user_after ep_edited',
        'evt_user_after ep_kept',
      ]);
    });

    it('takes the routing as it is now at the moment of the change, and for an untimed event', () => {
      expect(
        plan([
          event('evt_same_moment', { eventType: 'user.created', acceptedAt: at(replaced) }),
          event('evt_untimed'),
        ]),
      ).toEqual(['evt_same_moment ep_edited', 'evt_same_moment ep_kept', 'evt_untimed ep_kept']);
    });

    it('gives a named endpoint its past routing, and a deleted one only when named', () => {
      expect(
        plan([
          event('evt_named', { acceptedAt: at(replaced - 1), endpointIds: ['ep_edited'] }),
          event('evt_named_deleted', {
            acceptedAt: at(replaced - 1),
            endpointIds: ['ep_deleted', 'ep_kept'],
          }),
          event('evt_named_late', { acceptedAt: at(replaced + 1), endpointIds: ['ep_deleted'] }),
        ]),
      ).toEqual([
        'evt_named ep_edited',
        'evt_named_deleted ep_kept',
        'evt_named_deleted ep_deleted',
      ]);
    });

    it('of several changes after the event, takes the earliest', () => {
      const planned = planMessages(
        [
          event('evt_first', { eventType: 'a', acceptedAt: at(replaced - 20) }),
          event('evt_second', { eventType: 'b', acceptedAt: at(replaced - 5) }),
          event('evt_now', { eventType: 'c', acceptedAt: at(replaced + 5) }),
        ],
        [
          live('ep_1', { eventTypes: ['c'] }),
          live('ep_1', { eventTypes: ['b'], replacedAt: replaced }),
          live('ep_1', { eventTypes: ['a'], replacedAt: replaced - 10 }),
        ],
        counter(),
      );
      expect(planned.map((m) => m.eventId)).toEqual(['evt_first', 'evt_second', 'evt_now']);
    });

    it('leaves out a deleted endpoint created after the event', () => {
      const planned = planMessages(
        [event('evt_1', { acceptedAt: at(replaced - 10) })],
        [live('ep_gone', { createdAt: replaced - 5, replacedAt: replaced })],
        counter(),
      );
      expect(planned).toEqual([]);
    });
  });

  it("reaches only the endpoints of the event's organization", () => {
    const endpoints = [live('ep_a'), live('ep_b', { organizationId: 'org_b' })];
    const planned = planMessages(
      [
        event('evt_a'),
        event('evt_b', { organizationId: 'org_b' }),
        event('evt_c', { organizationId: 'org_c' }),
      ],
      endpoints,
      counter(),
    );
    expect(planned.map((m) => [m.eventId, m.endpointId, m.organizationId])).toEqual([
      ['evt_a', 'ep_a', 'org_a'],
      ['evt_b', 'ep_b', 'org_b'],
    ]);
  });

  it('applies the recipient rules: paused in, disabled out, endpoint ids narrow', () => {
    const endpoints = [
      live('ep_paused', { status: 'paused' }),
      live('ep_disabled', { status: 'disabled' }),
      live('ep_other'),
    ];
    expect(planMessages([event('evt_1')], endpoints, counter()).map((m) => m.endpointId)).toEqual([
      'ep_paused',
      'ep_other',
    ]);
    const narrowed = planMessages(
      [event('evt_1', { endpointIds: ['ep_other'] })],
      endpoints,
      counter(),
    );
    expect(narrowed.map((m) => m.endpointId)).toEqual(['ep_other']);
  });

  it('matches an event that names its endpoints against those alone, in endpoint order, once each, and never another organization’s', () => {
    const endpoints = [
      live('ep_1'),
      live('ep_2', { eventTypes: ['user.created'] }),
      live('ep_3'),
      live('ep_4', { status: 'disabled' }),
      live('ep_x', { organizationId: 'org_b' }),
    ];
    const events = [
      event('evt_1', { endpointIds: ['ep_3', 'ep_1', 'ep_3', 'ep_2', 'ep_4', 'ep_x', 'ep_gone'] }),
      event('evt_2', { endpointIds: [] }),
      event('evt_3', { organizationId: 'org_b', endpointIds: ['ep_x', 'ep_1'] }),
    ];
    expect(
      planMessages(events, endpoints, counter()).map((m) => `${m.eventId}:${m.endpointId}`),
    ).toEqual(['evt_1:ep_1', 'evt_1:ep_3', 'evt_3:ep_x']);
    // Property: naming endpoints gives what matching all of them then narrowing to the names gives.
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('ep_1', 'ep_2', 'ep_3', 'ep_4', 'ep_x', 'ep_gone'), {
          maxLength: 8,
        }),
        fc.constantFrom('org_a', 'org_b'),
        (ids, organizationId) => {
          const named = planMessages(
            [event('evt', { organizationId, endpointIds: ids })],
            endpoints,
            counter(),
          ).map((m) => m.endpointId);
          const all = planMessages([event('evt', { organizationId })], endpoints, counter())
            .map((m) => m.endpointId)
            .filter((id) => (ids as string[]).includes(id));
          expect(named).toEqual(all);
        },
      ),
    );
  });

  it("takes the attempts from the endpoint's retry setting, the default schedule without one", () => {
    const endpoints = [
      live('ep_default'),
      live('ep_two', { retry: { delaysMs: [0, 1_000], maxAgeMs: 60_000 } }),
    ];
    expect(planMessages([event('evt_1')], endpoints, counter()).map((m) => m.maxAttempts)).toEqual([
      5, 2,
    ]);
  });

  it("marks a polling endpoint's messages as polled", () => {
    const endpoints = [live('ep_poll', { kind: 'polling' }), live('ep_sqs', { kind: 'sqs' })];
    expect(planMessages([event('evt_1')], endpoints, counter()).map((m) => m.polled)).toEqual([
      true,
      false,
    ]);
  });

  it("plans an application's event for its endpoints only, and an event of none for the others", () => {
    const endpoints = [
      live('ep_own'),
      live('ep_a', { applicationId: 'app_a' }),
      live('ep_b', { applicationId: 'app_b' }),
    ];
    const planned = planMessages(
      [event('evt_1', { applicationId: 'app_a' }), event('evt_2')],
      endpoints,
      counter(),
    );
    expect(planned.map((m) => [m.eventId, m.endpointId])).toEqual([
      ['evt_1', 'ep_a'],
      ['evt_2', 'ep_own'],
    ]);
  });

  it('plans an event given twice once', () => {
    const planned = planMessages([event('evt_1'), event('evt_1')], [live('ep_1')], counter());
    expect(planned.map((m) => [m.messageId, m.eventId])).toEqual([['msg_0', 'evt_1']]);
  });

  it('plans nothing without events or without endpoints', () => {
    expect(planMessages([], [live('ep_1')], counter())).toEqual([]);
    expect(planMessages([event('evt_1')], [], counter())).toEqual([]);
  });

  it('gives messages fresh message ids by default', () => {
    const [message] = planMessages([event('evt_1')], [live('ep_1')]);
    expect(message.messageId).toMatch(/^msg_[0-9a-z]{26}$/);
  });
});

describe('eventTypeMatches', () => {
  it.each([
    ['order.created', 'order.created', true],
    ['order.created', 'order.created.v2', false],
    ['order.*', 'order.created', true],
    ['order.*', 'order.item.added', true],
    ['order.*', 'order', false],
    ['order.*', 'order.', false],
    ['order.*', 'orders.created', false],
    ['billing/*', 'billing/invoice', true],
    ['crm:*', 'crm:lead', true],
    ['*', 'anything', true],
  ])('%s covers %s: %s', (subscription, type, expected) => {
    expect(eventTypeMatches(subscription, type)).toBe(expected);
  });

  it.each([
    ['order.*', true],
    ['*', true],
    ['order.created', true],
    ['order*', false],
    ['*.created', false],
    ['order.*.created', false],
    ['**', false],
  ])('%s is a subscription: %s', (subscription, expected) => {
    expect(EVENT_TYPE_SUBSCRIPTION_PATTERN.test(subscription)).toBe(expected);
  });
});

describe('the routing rule (property)', () => {
  const segments = ['order', 'user', 'item'];
  const typeArb = fc
    .array(fc.constantFrom(...segments), { minLength: 1, maxLength: 3 })
    .map((parts) => parts.join('.'));
  const subscriptionArb = fc.oneof(
    typeArb,
    typeArb.map((type) => `${type}.*`),
    fc.constant('*'),
  );
  const channelArb = fc.constantFrom('eu', 'us', 'vip', 'beta');
  const thresholdFilter = fc.option(fc.integer({ min: 0, max: 10 }), { nil: null });
  const endpointArb = fc.record({
    status: fc.constantFrom('active', 'paused', 'disabled'),
    deleted: fc.boolean(),
    eventTypes: fc.array(subscriptionArb, { maxLength: 3 }),
    channels: fc.uniqueArray(channelArb, { maxLength: 3 }),
    minimum: thresholdFilter,
  });
  const eventArb = fc.record({
    eventType: typeArb,
    channels: fc.uniqueArray(channelArb, { maxLength: 3 }),
    n: fc.integer({ min: 0, max: 10 }),
  });

  /** The rule restated plainly, as the documentation says it. */
  function expectedToReceive(
    e: {
      status: string;
      deleted: boolean;
      eventTypes: string[];
      channels: string[];
      minimum: number | null;
    },
    event: { eventType: string; channels: string[]; n: number },
  ): boolean {
    if (e.deleted || e.status === 'disabled') return false;
    const typeOk =
      e.eventTypes.length === 0 ||
      e.eventTypes.some((s) =>
        s === '*'
          ? true
          : s.endsWith('.*')
            ? event.eventType.startsWith(s.slice(0, -1))
            : s === event.eventType,
      );
    const channelOk = e.channels.length === 0 || e.channels.some((c) => event.channels.includes(c));
    const filterOk = e.minimum === null || event.n >= e.minimum;
    return typeOk && channelOk && filterOk;
  }

  it('wildcards, channels and filters together decide exactly the recipients', () => {
    fc.assert(
      fc.property(fc.array(endpointArb, { maxLength: 8 }), eventArb, (endpoints, event) => {
        const candidates = endpoints.map((e, i) => ({
          id: `ep_${i}`,
          status: e.status,
          deleted: e.deleted,
          eventTypes: e.eventTypes,
          channels: e.channels,
          filter: e.minimum === null ? null : compileFilter({ 'payload.n': { $gte: e.minimum } }),
        }));
        const routed = {
          eventType: event.eventType,
          channels: event.channels,
          payload: { n: event.n },
        };
        const chosen = matchRecipients(candidates, routed).map((c) => c.id);
        const expected = endpoints
          .map((e, i) => (expectedToReceive(e, event) ? `ep_${i}` : null))
          .filter((id) => id !== null);
        expect(chosen).toEqual(expected);
        // planMessages, from stored endpoints, agrees.
        const stored = endpoints
          .map((e, i) => ({ e, i }))
          .filter(({ e }) => !e.deleted && e.status !== 'disabled')
          .map(({ e, i }): RecipientEndpoint => ({
            id: `ep_${i}`,
            organizationId: 'org_a',
            applicationId: null,
            kind: 'http',
            status: e.status,
            eventTypes: e.eventTypes,
            channels: e.channels,
            filter: e.minimum === null ? null : { 'payload.n': { $gte: e.minimum } },
            retry: null,
          }));
        const planned = planMessages(
          [{ id: 'evt_1', organizationId: 'org_a', ...routed }],
          stored,
        ).map((m) => m.endpointId);
        expect(planned).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });

  it('an event is routed by each endpoint as it was when the event was accepted', () => {
    // An endpoint's timeline: routings, each replaced at a later time; then it lives on with the
    // last one, or was deleted when the last one was replaced.
    const timelineArb = fc.record({
      routings: fc.array(fc.array(subscriptionArb, { maxLength: 2 }), {
        minLength: 1,
        maxLength: 4,
      }),
      gaps: fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 4, maxLength: 4 }),
      deleted: fc.boolean(),
    });
    fc.assert(
      fc.property(
        fc.array(timelineArb, { maxLength: 5 }),
        typeArb,
        fc.integer({ min: 0, max: 25 }),
        (timelines, eventType, acceptedAt) => {
          const stored: RecipientEndpoint[] = [];
          const expected: string[] = [];
          timelines.forEach(({ routings, gaps, deleted }, i) => {
            const id = `ep_${i}`;
            let time = 0;
            let inForce: string[] | undefined;
            routings.forEach((eventTypes, k) => {
              const last = k === routings.length - 1;
              const base: RecipientEndpoint = {
                id,
                organizationId: 'org_a',
                applicationId: null,
                kind: 'http',
                status: 'active',
                eventTypes,
                channels: [],
                filter: null,
                retry: null,
                createdAt: 0,
              };
              if (last && !deleted) {
                stored.push(base);
                inForce ??= eventTypes;
                return;
              }
              time += gaps[k];
              stored.push({ ...base, replacedAt: time });
              // In force at acceptedAt: the first routing replaced after it.
              if (inForce === undefined && time > acceptedAt) inForce = eventTypes;
            });
            if (
              inForce !== undefined &&
              (inForce.length === 0 || inForce.some((s) => eventTypeMatches(s, eventType)))
            ) {
              expected.push(id);
            }
          });
          // Given in any order: live ones and past ones interleaved, reversed.
          const planned = planMessages(
            [
              {
                id: 'evt',
                organizationId: 'org_a',
                eventType,
                acceptedAt: new Date(acceptedAt).toISOString(),
              },
            ],
            [...stored].reverse(),
          ).map((m) => m.endpointId);
          expect([...planned].sort()).toEqual(expected.sort());
        },
      ),
      { numRuns: 500 },
    );
  });

  it('an endpoint without types, channels or filter receives every event', () => {
    fc.assert(
      fc.property(eventArb, (event) =>
        endpointReceives(
          { eventTypes: [], channels: [], filter: null },
          { eventType: event.eventType, channels: event.channels, payload: { n: event.n } },
        ),
      ),
    );
  });
});
