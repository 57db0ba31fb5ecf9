import type { DomainError, HostIdentityGrant } from '@hookbase/domain';
import { checkBeforeSend, ClientCache, clientKey, deliveryAttributes } from './cloud-support';
import type { DeliveryTarget } from './destination.adapter';

describe('ClientCache', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('reuses a client by key and drops the least recently used beyond its size after a grace', async () => {
    const destroyed: string[] = [];
    const cache = new ClientCache<string>((client) => void destroyed.push(client), 2, 1_000);
    expect(cache.get('a', () => 'A')).toBe('A');
    expect(cache.get('b', () => 'B')).toBe('B');
    expect(cache.get('a', () => 'A2')).toBe('A'); // a is now the most recent
    cache.get('c', () => 'C'); // drops b
    expect(cache.size).toBe(2);
    expect(destroyed).toEqual([]); // still in its grace period
    jest.advanceTimersByTime(1_000);
    await Promise.resolve();
    expect(destroyed).toEqual(['B']);
    expect(cache.get('b', () => 'B2')).toBe('B2');
  });

  it('destroys every client, those in their grace period included, on close', async () => {
    const destroyed: string[] = [];
    const cache = new ClientCache<string>((client) => void destroyed.push(client), 1, 60_000);
    cache.get('a', () => 'A');
    cache.get('b', () => 'B'); // drops a, destroyed later
    await cache.close();
    expect(destroyed.sort()).toEqual(['A', 'B']);
    expect(cache.size).toBe(0);
  });
});

describe('clientKey', () => {
  it('is stable for equal parts and differs for other credentials', () => {
    const credentials = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'x' };
    const key = clientKey(['sqs', 'us-east-1', undefined, credentials]);
    expect(clientKey(['sqs', 'us-east-1', undefined, { ...credentials }])).toBe(key);
    expect(
      clientKey(['sqs', 'us-east-1', undefined, { ...credentials, secretAccessKey: 'y' }]),
    ).not.toBe(key);
    expect(key).not.toContain('AKIA');
  });
});

describe('deliveryAttributes', () => {
  it('names the message, webhook id, event and attempt', () => {
    expect(
      deliveryAttributes({
        messageId: 'msg_1',
        webhookId: 'msg_0',
        eventId: 'evt_1',
        eventType: 'a.b',
        payload: {},
        attemptNumber: 3,
      }),
    ).toEqual({
      'webhook-id': 'msg_0',
      'hookbase-message-id': 'msg_1',
      'hookbase-event-id': 'evt_1',
      'hookbase-event-type': 'a.b',
      'hookbase-attempt': '3',
    });
  });
});

describe('checkBeforeSend', () => {
  const options = { timeoutMs: 1_000, connectTimeoutMs: 1_000, allowPrivateTargets: true };
  const target = (hostIdentity?: HostIdentityGrant | null): DeliveryTarget => ({
    endpointId: 'ep_1',
    kind: 'sqs',
    url: null,
    config: {},
    secrets: [],
    hostIdentity,
  });
  const configs: Record<
    'sqs' | 'sns' | 'eventbridge' | 's3' | 'pubsub',
    { endpoint?: string; [field: string]: unknown }
  > = {
    sqs: { region: 'us-east-1', queueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/q' },
    sns: { region: 'us-east-1', topicArn: 'arn:aws:sns:us-east-1:123456789012:t' },
    eventbridge: { region: 'us-east-1', eventBusName: 'b' },
    s3: { region: 'us-east-1', bucket: 'bucket-1' },
    pubsub: { projectId: 'orders-prod', topic: 'orders' },
  };
  const codeOf = (run: () => void) => {
    try {
      run();
      return undefined;
    } catch (error) {
      return (error as DomainError).code;
    }
  };

  it.each(Object.entries(configs))(
    '%s: without credentials, only under a grant and never towards an override',
    (kind, config) => {
      const k = kind as keyof typeof configs;
      expect(codeOf(() => checkBeforeSend(k, config, target(), options))).toBe(
        'CREDENTIALS_REQUIRED',
      );
      expect(codeOf(() => checkBeforeSend(k, config, target(null), options))).toBe(
        'CREDENTIALS_REQUIRED',
      );
      expect(codeOf(() => checkBeforeSend(k, config, target({}), options))).toBeUndefined();
      const overridden = { ...config, endpoint: 'https://cloud.example' };
      expect(codeOf(() => checkBeforeSend(k, overridden, target({}), options))).toBe(
        'CREDENTIALS_REQUIRED',
      );
      const own = { ...overridden, credentials: { any: 'thing' } };
      expect(codeOf(() => checkBeforeSend(k, own, target(), options))).toBeUndefined();
    },
  );

  it('still refuses a private override when private targets are not allowed', () => {
    const config = { ...configs.sqs, endpoint: 'http://127.0.0.1:4566', credentials: {} };
    expect(
      codeOf(() =>
        checkBeforeSend('sqs', config, target(), { ...options, allowPrivateTargets: false }),
      ),
    ).toBe('URL_NOT_ALLOWED');
  });
});
