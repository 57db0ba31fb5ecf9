import { loadConfig } from '@hookbase/config';
import { CircuitState } from '@hookbase/domain';
import { KafkaProducer, topicNames } from '@hookbase/kafka';
import {
  EndpointEntity,
  EndpointRepository,
  FifoLaneRepository,
  MessageRepository,
  OrganizationRepository,
  QueuedMessage,
} from '@hookbase/persistence';
import { AttemptRecorder } from './attempt-recorder';
import { DispatcherDestinations } from './destination-registry.provider';
import { AttemptService } from './attempt.service';
import { DeadLetterService } from './dead-letter.service';
import { DispatchSlots } from './dispatch-pool';
import { EndpointGuards } from './endpoint-guards';
import { FifoLaneRunner } from './fifo-lane-runner';

/** No adapter for any kind: an attempt fails at once, without any network. */
const noDestinations: DispatcherDestinations = {
  adapterFor: () => undefined,
  openConfig: (endpoint) => endpoint.config,
  close: async () => [],
};

/** A FIFO lane whose endpoint is both rate-limited and half open, with its stores replaced. */
describe('FifoLaneRunner at a rate-limited endpoint whose circuit is due a probe', () => {
  const COOLDOWN_MS = 30_000;
  const endpoint = {
    id: 'ep_1',
    organizationId: 'org_a',
    kind: 'nosuchkind', // no adapter: an attempt fails at once, without any network
    url: 'http://127.0.0.1:1/never',
    config: {},
    status: 'active',
    deletedAt: null,
    retry: { delaysMs: [0], maxAgeMs: 3_600_000 },
    rateLimitPerSecond: 0.1, // one token every 10 s: the lane holds its head instead of waiting
    fifoEnabled: true,
  } as unknown as EndpointEntity;

  beforeEach(() => jest.useFakeTimers({ now: new Date('2026-01-01T00:00:00Z') }));
  afterEach(() => jest.useRealTimers());

  function lane() {
    const head: QueuedMessage = {
      messageId: 'msg_1',
      eventId: 'evt_1',
      organizationId: 'org_a',
      endpointId: 'ep_1',
      eventType: 't',
      payload: {},
      acceptedAt: new Date(),
      status: 'fifo_waiting',
      attempts: 0,
      nextAttemptAt: null,
      plan: 'pro',
    };
    let queued = [head];
    const blocked: (string | null)[] = [];
    const recorded: unknown[] = [];
    const store = {
      acquire: async () => true,
      renew: async () => new Set(['ep_1']),
      queue: async () => queued.slice(),
      releaseIfEmpty: async () => true,
      releaseAll: async () => undefined,
      setBlocked: async (_id: string, _owner: string, reason: string | null) =>
        void blocked.push(reason),
      markHeadInFlight: async () => undefined,
      unowned: async () => [],
    } as unknown as FifoLaneRepository;
    const endpoints = {
      findByIds: async () => [endpoint],
      signingSecrets: async () => new Map(),
    } as unknown as EndpointRepository;
    const recorder = {
      record: async (record: unknown) => {
        recorded.push(record);
        queued = [];
      },
    } as unknown as AttemptRecorder;
    const slots: DispatchSlots = {
      run: (_organizationId, task) => task(),
      runWithinShare: async (_organizationId, task) => ({ ran: true, value: await task() }),
    };
    const config = loadConfig({});
    Object.assign(config.delivery, { circuit: { failureThreshold: 3, cooldownMs: COOLDOWN_MS } });
    const endpointGuards = new EndpointGuards(config, slots);
    const producer = {
      publish: async () => undefined,
      send: async () => undefined,
    } as unknown as KafkaProducer;
    const attempts = new AttemptService(
      topicNames('unit'),
      producer,
      recorder,
      { hostCloudIdentity: async () => null } as unknown as OrganizationRepository,
      noDestinations,
    );
    const deadLetters = new DeadLetterService(
      topicNames('unit'),
      producer,
      {} as MessageRepository,
    );
    const guards = {
      /** The endpoint's one token is taken: the next comes in 10 s. */
      async spendToken() {
        expect(await endpointGuards.admit(endpoint)).toBe(true);
      },
      /** Three failures at `openedAt` open the circuit. */
      open(openedAt: number) {
        const now = Date.now();
        jest.setSystemTime(openedAt);
        for (let i = 0; i < 3; i++) endpointGuards.afterAttempt('ep_1', 'retry');
        jest.setSystemTime(now);
      },
      circuit: (): CircuitState => endpointGuards.circuitOf('ep_1'),
    };
    const runner = new FifoLaneRunner(
      config,
      store,
      endpoints,
      endpointGuards,
      attempts,
      deadLetters,
    );
    return { runner, guards, blocked, recorded };
  }

  it('keeps the probe until the attempt goes, and never says circuit_open while rate-limited', async () => {
    const { runner, guards, blocked, recorded } = lane();
    await guards.spendToken();
    // Open for longer than the cooldown: a probe is due now.
    guards.open(Date.now() - COOLDOWN_MS - 1);

    runner.wake(['ep_1']);
    await jest.advanceTimersByTimeAsync(100);
    // Rate-limited: no attempt yet, and the circuit's probe is not taken by a lane that waits.
    expect(recorded).toHaveLength(0);
    expect(guards.circuit().state).toBe('open');

    // The next token comes after 10 s, well within the cooldown: the probe goes then.
    for (let waited = 0; recorded.length === 0 && waited < COOLDOWN_MS; waited += 500) {
      await jest.advanceTimersByTimeAsync(500);
    }
    expect(recorded).toHaveLength(1);
    expect(blocked).not.toContain('circuit_open');
    await runner.onApplicationShutdown();
  });
});
