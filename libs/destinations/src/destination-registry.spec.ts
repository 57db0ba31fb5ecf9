import type { EndpointKind } from '@hookbase/domain';
import { generateCredentialsKey } from './credentials-cipher';
import type { DeliveryReport } from './destination.adapter';
import { ClosableDestinationAdapter, DestinationAdapters } from './destination-registry';
import { EndpointCredentials, hasStoredCredentials } from './endpoint-credentials';

const queueUrl = 'https://sqs.us-east-1.amazonaws.com/123456789012/orders';
const credentials = { accessKeyId: 'AKIAEXAMPLEKEY123456', secretAccessKey: 's3cr3t-value' };

function fake(kind: EndpointKind, closing: () => Promise<void> = async () => undefined) {
  const adapter: ClosableDestinationAdapter & { closed: number } = {
    kind,
    closed: 0,
    deliver: async (): Promise<DeliveryReport> => ({
      outcome: { kind: 'succeeded', status: 200 },
      durationMs: 1,
      responseExcerpt: null,
    }),
    close: async () => {
      adapter.closed++;
      await closing();
    },
  };
  return adapter;
}

const options = (key?: string) => ({
  http: {
    timeoutMs: 1_000,
    connectTimeoutMs: 1_000,
    allowPrivateTargets: true,
    responseExcerptBytes: 100,
    userAgent: 'test',
  },
  cloud: { timeoutMs: 1_000, connectTimeoutMs: 1_000, allowPrivateTargets: true },
  credentials: { key },
});

describe('DestinationAdapters', () => {
  it('gives the adapter of each kind it was given, and none for another kind', () => {
    const http = fake('http');
    const sqs = fake('sqs');
    const registry = new DestinationAdapters(options(), [http, sqs]);
    expect(registry.adapterFor('http')).toBe(http);
    expect(registry.adapterFor('sqs')).toBe(sqs);
    expect(registry.adapterFor('sns')).toBeUndefined();
  });

  it('serves every push kind by default, and no adapter for polling endpoints', async () => {
    const registry = new DestinationAdapters(options());
    for (const kind of ['http', 'sqs', 'sns', 'eventbridge', 'pubsub', 's3'] as const) {
      expect(registry.adapterFor(kind)?.kind).toBe(kind);
    }
    expect(registry.adapterFor('polling')).toBeUndefined();
    expect(await registry.close()).toEqual([]);
  });

  it('refuses two adapters for one kind', () => {
    expect(() => new DestinationAdapters(options(), [fake('sqs'), fake('sqs')])).toThrow(
      'two destination adapters for kind sqs',
    );
  });

  it('opens stored credentials with its key, and leaves a config without any as it is', () => {
    const key = generateCredentialsKey();
    const stored = new EndpointCredentials({ key }).seal(
      'org_a',
      'sqs',
      { region: 'us-east-1', queueUrl, credentials },
      { allowPrivateTargets: false, hostIdentity: null },
    );
    expect(hasStoredCredentials(stored)).toBe(true);
    const registry = new DestinationAdapters(options(key), []);
    expect(registry.openConfig({ organizationId: 'org_a', kind: 'sqs', config: stored })).toEqual({
      region: 'us-east-1',
      queueUrl,
      credentials,
    });
    const plain = { region: 'us-east-1', queueUrl };
    expect(registry.openConfig({ organizationId: 'org_a', kind: 'sqs', config: plain })).toBe(
      plain,
    );
    // Without the key they were sealed with, they do not open.
    const keyless = new DestinationAdapters(options(), []);
    expect(() =>
      keyless.openConfig({ organizationId: 'org_a', kind: 'sqs', config: stored }),
    ).toThrow('HOOKBASE_CREDENTIALS_KEY is not configured');
  });

  it('closes every adapter, and reports the ones that failed to close without throwing', async () => {
    const http = fake('http');
    const sqs = fake('sqs', async () => {
      throw new Error('sqs would not close');
    });
    const registry = new DestinationAdapters(options(), [http, sqs]);
    const errors = await registry.close();
    expect(errors.map((error) => error.message)).toEqual(['sqs would not close']);
    expect([http.closed, sqs.closed]).toEqual([1, 1]);
  });
});
