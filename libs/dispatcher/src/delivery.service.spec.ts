import { loadConfig } from '@hookbase/config';
import { KafkaProducer, topicNames } from '@hookbase/kafka';
import {
  EndpointEntity,
  EndpointRepository,
  MessageRepository,
  OrganizationRepository,
} from '@hookbase/persistence';
import { AttemptRecorder } from './attempt-recorder';
import { DispatcherDestinations } from './destination-registry.provider';
import { DeliveryService, PendingDelivery } from './delivery.service';
import { DispatchSlots, SlotOutcome } from './dispatch-pool';
import { EndpointGuards } from './endpoint-guards';

/** No adapter for any kind: an attempt fails at once, without any network. */
const noDestinations: DispatcherDestinations = {
  adapterFor: () => undefined,
  openConfig: (endpoint) => endpoint.config,
  close: async () => [],
};

/**
 * DeliveryService's use of its dispatch slots, with the slots (and the stores) replaced: which
 * organization a message asks for, and what happens when its organization's share has no room.
 */
describe('DeliveryService and its dispatch slots', () => {
  const endpoint = {
    id: 'ep_1',
    organizationId: 'org_a',
    kind: 'nosuchkind', // no adapter: an attempt fails at once, without any network
    url: 'http://127.0.0.1:1/never',
    config: {},
    status: 'active',
    deletedAt: null,
    retry: { delaysMs: [0], maxAgeMs: 60_000 },
    rateLimitPerSecond: null,
    fifoEnabled: false,
  } as unknown as EndpointEntity;
  const delivery: PendingDelivery = {
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
  };

  function service(slots: DispatchSlots) {
    const held: { ids: readonly string[]; until: Date }[] = [];
    const recorded: unknown[] = [];
    const messages = {
      markInFlight: async () => undefined,
      // start() also holds the messages of paused endpoints: none here (an empty list).
      hold: async (ids: readonly string[], until: Date) => {
        if (ids.length > 0) held.push({ ids, until });
      },
      setStatus: async () => undefined,
    } as unknown as MessageRepository;
    const endpoints = {
      findByIds: async () => [endpoint],
      signingSecrets: async () => new Map(),
    } as unknown as EndpointRepository;
    const producer = {
      publish: async () => undefined,
      send: async () => undefined,
    } as unknown as KafkaProducer;
    const recorder = {
      record: async (record: unknown) => void recorded.push(record),
    } as unknown as AttemptRecorder;
    const config = loadConfig({});
    const deliveries = new DeliveryService(
      config,
      topicNames('unit'),
      endpoints,
      messages,
      producer,
      recorder,
      new EndpointGuards(config, slots),
      { hostCloudIdentity: async () => null } as unknown as OrganizationRepository,
      noDestinations,
    );
    return { deliveries, held, recorded };
  }

  it('asks for a slot of the message’s organization and attempts in it', async () => {
    const asked: string[] = [];
    const slots: DispatchSlots = {
      run: (_organizationId, task) => task(),
      runWithinShare: async <T>(organizationId: string, task: () => Promise<T>) => {
        asked.push(organizationId);
        return { ran: true, value: await task() } as SlotOutcome<T>;
      },
    };
    const { deliveries, held, recorded } = service(slots);
    await deliveries.deliver([delivery]);
    expect(asked).toEqual(['org_a']);
    expect(recorded).toHaveLength(1);
    expect(held).toEqual([]);
    await deliveries.onApplicationShutdown();
  });

  it('holds the message on the retry schedule, without an attempt, when its share has no room', async () => {
    const slots: DispatchSlots = {
      run: (_organizationId, task) => task(),
      runWithinShare: async () => ({ ran: false }),
    };
    const { deliveries, held, recorded } = service(slots);
    const before = Date.now();
    await deliveries.deliver([delivery]);
    expect(recorded).toEqual([]);
    expect(held).toHaveLength(1);
    expect(held[0].ids).toEqual(['msg_1']);
    expect(held[0].until.getTime()).toBeGreaterThanOrEqual(before + 1_000);
    await deliveries.onApplicationShutdown();
  });
});
