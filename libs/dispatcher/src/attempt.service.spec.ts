import { AttemptOutcome, EndpointKind } from '@hookbase/domain';
import { DeliveryTarget, OutboundMessage } from '@hookbase/destinations';
import { KafkaProducer, topicNames } from '@hookbase/kafka';
import { AttemptRecord, EndpointEntity, OrganizationRepository } from '@hookbase/persistence';
import { AttemptRecorder } from './attempt-recorder';
import { AttemptService } from './attempt.service';
import { DispatcherDestinations } from './destination-registry.provider';
import { ReadyDelivery } from './pending-delivery';

const endpointOf = (over: Partial<EndpointEntity> = {}) =>
  ({
    id: 'ep_1',
    organizationId: 'org_a',
    kind: 'http',
    url: 'http://127.0.0.1:1/hooks',
    config: { sealed: true },
    status: 'active',
    deletedAt: null,
    retry: { delaysMs: [0, 5_000], maxAgeMs: 3_600_000 },
    rateLimitPerSecond: null,
    fifoEnabled: false,
    ...over,
  }) as unknown as EndpointEntity;

const delivery: ReadyDelivery = {
  messageId: 'msg_1',
  webhookId: 'wh_1',
  source: 'new',
  eventId: 'evt_1',
  organizationId: 'org_a',
  endpointId: 'ep_1',
  eventType: 'order.created',
  payload: { id: 1 },
  acceptedAt: new Date(),
  attemptsMade: 0,
};

/** The attempt service with its registry, producer, recorder and organizations replaced. */
function service(
  options: {
    outcome?: AttemptOutcome;
    kinds?: EndpointKind[];
    openConfig?: (config: Record<string, unknown>) => Record<string, unknown>;
    hostIdentity?: () => Promise<unknown>;
    record?: (record: AttemptRecord) => Promise<void>;
  } = {},
) {
  const log: string[] = [];
  const sent: { message: OutboundMessage; target: DeliveryTarget }[] = [];
  const records: AttemptRecord[] = [];
  const dlq: { topic: string; key: string; value: Record<string, unknown> }[] = [];
  const destinations: DispatcherDestinations = {
    adapterFor: (kind) =>
      (options.kinds ?? ['http', 'sqs']).includes(kind)
        ? {
            kind,
            deliver: async (message, target) => {
              log.push('deliver');
              sent.push({ message, target });
              return {
                outcome: options.outcome ?? { kind: 'succeeded', status: 200 },
                durationMs: 12,
                responseExcerpt: 'ok',
              };
            },
          }
        : undefined,
    openConfig: (endpoint) =>
      (options.openConfig ?? ((config) => ({ ...config, opened: true })))(endpoint.config),
    openReceiverOptions: () => ({ headers: [], auth: null, timeoutMs: null, tlsCa: null }),
    close: async () => [],
  };
  const producer = {
    publish: async (topic: string, message: { key: string; value: string }) => {
      log.push('dlq');
      dlq.push({ topic, key: message.key, value: JSON.parse(message.value) });
    },
  } as unknown as KafkaProducer;
  const recorder = {
    record: async (record: AttemptRecord, recordOptions: { soon?: boolean } = {}) => {
      log.push(recordOptions.soon ? 'record soon' : 'record');
      records.push(record);
      await options.record?.(record);
    },
  } as unknown as AttemptRecorder;
  const organizations = {
    hostCloudIdentity: options.hostIdentity ?? (async () => ({ accounts: ['1'] })),
  } as unknown as OrganizationRepository;
  const attempts = new AttemptService(
    topicNames('unit'),
    producer,
    recorder,
    organizations,
    destinations,
  );
  return { attempts, log, sent, records, dlq };
}

describe('AttemptService', () => {
  it('sends through the adapter of the endpoint’s kind with its config opened, and records a success', async () => {
    const { attempts, sent, records } = service();
    const result = await attempts.attempt(delivery, endpointOf({ fifoEnabled: true }), ['s1']);
    expect(result.outcome).toBe('succeeded');
    expect(result.decision).toEqual({ status: 'succeeded' });
    expect(sent).toEqual([
      {
        message: {
          messageId: 'msg_1',
          webhookId: 'wh_1',
          eventId: 'evt_1',
          eventType: 'order.created',
          payload: { id: 1 },
          attemptNumber: 1,
        },
        target: {
          endpointId: 'ep_1',
          kind: 'http',
          url: 'http://127.0.0.1:1/hooks',
          config: { sealed: true, opened: true },
          secrets: ['s1'],
          ordered: true,
          hostIdentity: null,
          // No options set: nothing opened, nothing read.
          receiver: null,
        },
      },
    ]);
    expect(records).toEqual([
      {
        messageId: 'msg_1',
        attemptNumber: 1,
        startedAt: expect.any(Date),
        durationMs: 12,
        outcome: 'succeeded',
        responseStatus: 200,
        responseExcerpt: 'ok',
        error: null,
        messageStatus: 'succeeded',
        nextAttemptAt: null,
      },
    ]);
  });

  it('records a retry with its next attempt time, and dead-letters nothing', async () => {
    const { attempts, records, dlq } = service({
      outcome: { kind: 'retry', status: 503, error: 'HTTP 503' },
    });
    const result = await attempts.attempt(delivery, endpointOf(), ['s1']);
    expect(result.outcome).toBe('retry');
    expect(result.decision.status).toBe('awaiting_retry');
    expect(records[0]).toMatchObject({
      outcome: 'retry',
      responseStatus: 503,
      error: 'HTTP 503',
      messageStatus: 'awaiting_retry',
      nextAttemptAt: expect.any(Date),
    });
    expect(dlq).toEqual([]);
  });

  it('publishes the DLQ record before it records a message that failed for good', async () => {
    const { attempts, log, dlq, records } = service({
      outcome: { kind: 'failed', status: 400, error: 'HTTP 400' },
    });
    const result = await attempts.attempt({ ...delivery, attemptsMade: 1 }, endpointOf(), ['s1']);
    expect(result).toMatchObject({ outcome: 'failed', decision: { status: 'failed' } });
    expect(log).toEqual(['deliver', 'dlq', 'record']);
    expect(dlq).toEqual([
      {
        topic: topicNames('unit').dlq,
        key: 'ep_1',
        value: expect.objectContaining({
          messageId: 'msg_1',
          reason: 'permanent_failure',
          attempts: 2,
          lastError: 'HTTP 400',
          lastResponseStatus: 400,
        }),
      },
    ]);
    expect(records[0]).toMatchObject({ attemptNumber: 2, messageStatus: 'failed' });
  });

  it('fails an attempt at a kind no adapter serves, without sending', async () => {
    const { attempts, sent, records } = service({ kinds: [] });
    const result = await attempts.attempt(delivery, endpointOf(), ['s1']);
    expect(result.outcome).toBe('failed');
    expect(sent).toEqual([]);
    expect(records[0]).toMatchObject({
      error: 'endpoint kind http is not supported',
      durationMs: 0,
    });
  });

  it('retries, without sending, when stored credentials cannot be opened', async () => {
    const { attempts, sent, records } = service({
      openConfig: () => {
        throw new Error('no key');
      },
    });
    const result = await attempts.attempt(delivery, endpointOf(), ['s1']);
    expect(result.outcome).toBe('retry');
    expect(sent).toEqual([]);
    expect(records[0].error).toBe('stored credentials: no key');
  });

  it('retries, without sending, an http endpoint none of whose signing secrets opens', async () => {
    const { attempts, sent, records } = service();
    const result = await attempts.attempt(delivery, endpointOf(), []);
    expect(result.outcome).toBe('retry');
    expect(sent).toEqual([]);
    expect(records[0].error).toMatch(/^no signing secret can be opened/);
  });

  it('gives a cloud endpoint without credentials its organization’s host identity, read fresh', async () => {
    const { attempts, sent } = service();
    await attempts.attempt(delivery, endpointOf({ kind: 'sqs', url: null }), []);
    expect(sent[0].target.hostIdentity).toEqual({ accounts: ['1'] });
  });

  it('uses no attempt when the host identity setting cannot be read: it throws before sending or recording anything', async () => {
    const { attempts, sent, records } = service({
      hostIdentity: async () => {
        throw new Error('db down');
      },
    });
    await expect(
      attempts.attempt(delivery, endpointOf({ kind: 'sqs', url: null }), []),
    ).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      message: "the organization's host identity setting could not be read: db down",
    });
    expect(sent).toEqual([]);
    expect(records).toEqual([]);
  });

  it('returns a deferred success before its record is stored, and only a success', async () => {
    let store!: () => void;
    const stored = new Promise<void>((resolve) => (store = resolve));
    const { attempts } = service({ record: () => stored });
    const result = await attempts.attempt(delivery, endpointOf(), ['s1'], {
      deferSuccessRecord: true,
    });
    let settled = false;
    void result.recorded.then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    store();
    await result.recorded;
    expect(settled).toBe(true);

    const retried = service({
      outcome: { kind: 'retry', error: 'timeout' },
      record: () => new Promise(() => undefined), // never stored
    });
    let returned = false;
    void retried.attempts
      .attempt(delivery, endpointOf(), ['s1'], { deferSuccessRecord: true })
      .then(() => (returned = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(returned).toBe(false);
  });

  it('asks for a record written soon only when told to (a FIFO lane)', async () => {
    const plain = service();
    await plain.attempts.attempt(delivery, endpointOf(), ['s1']);
    expect(plain.log).toEqual(['deliver', 'record']);
    const lane = service();
    await lane.attempts.attempt(delivery, endpointOf(), ['s1'], {
      deferSuccessRecord: true,
      recordSoon: true,
    });
    expect(lane.log).toEqual(['deliver', 'record soon']);
  });
});
