import { DomainError } from '@hookbase/domain';
import { generateCredentialsKey } from './credentials-cipher';
import {
  ENCRYPTED_CREDENTIALS_FIELD,
  EndpointCredentials,
  hasStoredCredentials,
  publicEndpointConfig,
} from './endpoint-credentials';

const queueUrl = 'https://sqs.us-east-1.amazonaws.com/123456789012/orders';
const credentials = { accessKeyId: 'AKIAEXAMPLEKEY123456', secretAccessKey: 's3cr3t-value' };
const options = { allowPrivateTargets: false, hostIdentity: null };
/** An organization the operator opted in to the host's identity, for any target. */
const hostIdentity = { ...options, hostIdentity: {} };

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return (error as DomainError).code;
  }
  return undefined;
}

describe('EndpointCredentials', () => {
  const store = new EndpointCredentials({ key: generateCredentialsKey() });

  it('stores credentials only as an envelope, and opens them for the same organization and kind', () => {
    const stored = store.seal(
      'org_a',
      'sqs',
      { region: 'us-east-1', queueUrl, credentials },
      options,
    );
    expect(stored.credentials).toBeUndefined();
    expect(JSON.stringify(stored)).not.toContain('s3cr3t-value');
    expect(JSON.stringify(stored)).not.toContain(credentials.accessKeyId);
    expect(hasStoredCredentials(stored)).toBe(true);
    expect(publicEndpointConfig(stored)).toEqual({ region: 'us-east-1', queueUrl });
    expect(store.open('org_a', 'sqs', stored)).toEqual({
      region: 'us-east-1',
      queueUrl,
      credentials,
    });
    // Bound to the organization: a copy in another one does not decrypt.
    expect(() => store.open('org_b', 'sqs', stored)).toThrow(/cannot be decrypted/);
  });

  it('keeps, replaces or removes stored credentials on a PATCH', () => {
    const first = store.seal(
      'org_a',
      'sqs',
      { region: 'us-east-1', queueUrl, credentials },
      options,
    );
    const kept = store.seal(
      'org_a',
      'sqs',
      { region: 'us-east-1', queueUrl },
      { ...options, current: first },
    );
    expect(kept[ENCRYPTED_CREDENTIALS_FIELD]).toBe(first[ENCRYPTED_CREDENTIALS_FIELD]);
    const other = { accessKeyId: 'AKIAOTHERKEY12345678', secretAccessKey: 'other' };
    const replaced = store.seal(
      'org_a',
      'sqs',
      { region: 'us-east-1', queueUrl, credentials: other },
      { ...options, current: first },
    );
    expect(store.open('org_a', 'sqs', replaced).credentials).toEqual(other);
    // Removing them leaves the host's identity: refused unless the organization is opted in.
    expect(
      codeOf(() =>
        store.seal(
          'org_a',
          'sqs',
          { region: 'us-east-1', queueUrl, credentials: null },
          { ...options, current: first },
        ),
      ),
    ).toBe('CREDENTIALS_REQUIRED');
    const removed = store.seal(
      'org_a',
      'sqs',
      { region: 'us-east-1', queueUrl, credentials: null },
      { ...hostIdentity, current: first },
    );
    expect(hasStoredCredentials(removed)).toBe(false);
    expect(store.open('org_a', 'sqs', removed)).toEqual({ region: 'us-east-1', queueUrl });
  });

  it('refuses a client-sent envelope field and invalid configs with VALIDATION_FAILED', () => {
    expect(
      codeOf(() =>
        store.seal(
          'org_a',
          'sqs',
          { region: 'us-east-1', queueUrl, [ENCRYPTED_CREDENTIALS_FIELD]: 'v1:a:b:c' },
          options,
        ),
      ),
    ).toBe('VALIDATION_FAILED');
    expect(codeOf(() => store.seal('org_a', 's3', { region: 'us-east-1' }, options))).toBe(
      'VALIDATION_FAILED',
    );
  });

  it('refuses a private endpoint override unless private targets are allowed', () => {
    const config = {
      region: 'us-east-1',
      queueUrl,
      endpoint: 'http://127.0.0.1:45000',
      credentials,
    };
    expect(codeOf(() => store.seal('org_a', 'sqs', config, options))).toBe('URL_NOT_ALLOWED');
    expect(
      store.seal('org_a', 'sqs', config, { ...options, allowPrivateTargets: true }).endpoint,
    ).toBe('http://127.0.0.1:45000');
  });

  it('without a key: refuses credentials (FEATURE_NOT_AVAILABLE) and accepts configs without them', () => {
    const keyless = new EndpointCredentials({ key: undefined });
    expect(
      codeOf(() =>
        keyless.seal('org_a', 'sqs', { region: 'us-east-1', queueUrl, credentials }, options),
      ),
    ).toBe('FEATURE_NOT_AVAILABLE');
    expect(keyless.seal('org_a', 'sqs', { region: 'us-east-1', queueUrl }, hostIdentity)).toEqual({
      region: 'us-east-1',
      queueUrl,
    });
  });

  describe('the host identity', () => {
    const allowed = { ...options, allowPrivateTargets: true };

    it('is refused for an organization that is not opted in, for every kind', () => {
      const configs = {
        sqs: { region: 'us-east-1', queueUrl },
        sns: { region: 'us-east-1', topicArn: 'arn:aws:sns:us-east-1:123456789012:orders' },
        eventbridge: { region: 'us-east-1', eventBusName: 'orders' },
        s3: { region: 'us-east-1', bucket: 'orders-bucket' },
        pubsub: { projectId: 'orders-prod', topic: 'orders' },
      } as const;
      for (const [kind, config] of Object.entries(configs)) {
        const seal = (grant: Record<string, unknown> | null) =>
          store.seal(
            'org_a',
            kind as keyof typeof configs,
            { ...config },
            {
              ...options,
              hostIdentity: grant,
            },
          );
        expect(codeOf(() => seal(null))).toBe('CREDENTIALS_REQUIRED');
        expect(seal({})).toEqual(expect.objectContaining(config));
      }
    });

    it('is never combined with an endpoint override, even for an opted-in organization', () => {
      const refused = () =>
        store.seal(
          'org_a',
          'pubsub',
          { projectId: 'orders-prod', topic: 'orders', endpoint: 'https://pubsub.example.com' },
          { ...allowed, hostIdentity: {} },
        );
      expect(codeOf(refused)).toBe('CREDENTIALS_REQUIRED');
      expect(refused).toThrow(/never used towards an endpoint override/);
    });

    it('is held to the grant: accounts, regions, projects', () => {
      const grant = {
        awsAccountIds: ['123456789012'],
        awsRegions: ['us-east-1'],
        googleProjectIds: ['orders-prod'],
      };
      const seal = (kind: 'sqs' | 'pubsub' | 's3' | 'eventbridge', config: object) =>
        codeOf(() => store.seal('org_a', kind, { ...config }, { ...options, hostIdentity: grant }));
      expect(seal('sqs', { region: 'us-east-1', queueUrl })).toBeUndefined();
      expect(
        seal('sqs', {
          region: 'us-east-1',
          queueUrl: 'https://sqs.us-east-1.amazonaws.com/999999999999/orders',
        }),
      ).toBe('CREDENTIALS_REQUIRED');
      expect(seal('pubsub', { projectId: 'someone-else', topic: 'orders' })).toBe(
        'CREDENTIALS_REQUIRED',
      );
      // S3 and EventBridge name the account only when asked to.
      expect(seal('s3', { region: 'us-east-1', bucket: 'orders-bucket' })).toBe(
        'CREDENTIALS_REQUIRED',
      );
      expect(
        seal('s3', {
          region: 'us-east-1',
          bucket: 'orders-bucket',
          expectedBucketOwner: '123456789012',
        }),
      ).toBeUndefined();
      expect(
        seal('eventbridge', {
          region: 'us-east-1',
          eventBusName: 'arn:aws:events:us-east-1:123456789012:event-bus/orders',
        }),
      ).toBeUndefined();
    });
  });

  describe('binding stored credentials to their target', () => {
    const aws = { accessKeyId: 'AKIAEXAMPLEKEY123456', secretAccessKey: 'x' };
    const google = {
      clientEmail: 'svc@orders-prod.iam.gserviceaccount.com',
      privateKey: '-----BEGIN PRIVATE KEY-----\nx\n-----END PRIVATE KEY-----\n',
    };
    const cases = [
      {
        kind: 'sqs',
        config: { region: 'us-east-1', queueUrl, credentials: aws },
        changes: {
          region: 'eu-west-1',
          endpoint: 'https://sqs.attacker.example',
          queueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/other',
        },
        harmless: {},
      },
      {
        kind: 'sns',
        config: {
          region: 'us-east-1',
          topicArn: 'arn:aws:sns:us-east-1:123456789012:orders',
          credentials: aws,
        },
        changes: {
          endpoint: 'https://sns.attacker.example',
          topicArn: 'arn:aws:sns:us-east-1:999999999999:orders',
        },
        harmless: {},
      },
      {
        kind: 'eventbridge',
        config: { region: 'us-east-1', eventBusName: 'orders', credentials: aws },
        changes: {
          region: 'eu-west-1',
          endpoint: 'https://events.attacker.example',
          eventBusName: 'other',
        },
        harmless: { source: 'shop.orders' },
      },
      {
        kind: 's3',
        config: { region: 'us-east-1', bucket: 'orders-bucket', credentials: aws },
        changes: {
          region: 'eu-west-1',
          endpoint: 'https://s3.attacker.example',
          bucket: 'other-bucket',
        },
        harmless: { prefix: 'hooks/' },
      },
      {
        kind: 'pubsub',
        config: { projectId: 'orders-prod', topic: 'orders', credentials: google },
        changes: {
          projectId: 'other-project',
          endpoint: 'https://pubsub.attacker.example',
          topic: 'other',
        },
        harmless: {},
      },
    ] as const;

    it.each(cases)(
      '$kind: a change of target without the credentials is refused, with them it is taken',
      ({ kind, config, changes, harmless }) => {
        const first = store.seal('org_a', kind, { ...config }, hostIdentity);
        const { credentials: given, ...withoutCredentials } = config;
        for (const [field, value] of Object.entries(changes)) {
          const changed = { ...withoutCredentials, [field]: value };
          let refusal: DomainError | undefined;
          try {
            store.seal('org_a', kind, changed, { ...hostIdentity, current: first });
          } catch (error) {
            refusal = error as DomainError;
          }
          expect(refusal?.code).toBe('CREDENTIALS_TARGET_CHANGED');
          expect(refusal?.message).toContain(`config.${field}`);
          const resent = store.seal(
            'org_a',
            kind,
            { ...changed, credentials: given },
            { ...hostIdentity, current: first },
          );
          expect(hasStoredCredentials(resent)).toBe(true);
        }
        // The same target (a GET's config sent back) and changes that are not the target keep them.
        const same = store.seal(
          'org_a',
          kind,
          { ...withoutCredentials, ...harmless },
          {
            ...hostIdentity,
            current: first,
          },
        );
        expect(same[ENCRYPTED_CREDENTIALS_FIELD]).toBe(first[ENCRYPTED_CREDENTIALS_FIELD]);
      },
    );
  });

  it('leaves other kinds as they are', () => {
    expect(store.open('org_a', 'http', { anything: 1 })).toEqual({ anything: 1 });
  });
});
