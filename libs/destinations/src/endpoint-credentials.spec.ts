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
const options = { allowPrivateTargets: false };

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
    const removed = store.seal(
      'org_a',
      'sqs',
      { region: 'us-east-1', queueUrl, credentials: null },
      { ...options, current: first },
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
    const config = { region: 'us-east-1', queueUrl, endpoint: 'http://127.0.0.1:45000' };
    expect(codeOf(() => store.seal('org_a', 'sqs', config, options))).toBe('URL_NOT_ALLOWED');
    expect(store.seal('org_a', 'sqs', config, { allowPrivateTargets: true }).endpoint).toBe(
      'http://127.0.0.1:45000',
    );
  });

  it('without a key: refuses credentials (FEATURE_NOT_AVAILABLE) and accepts configs without them', () => {
    const keyless = new EndpointCredentials({ key: undefined });
    expect(
      codeOf(() =>
        keyless.seal('org_a', 'sqs', { region: 'us-east-1', queueUrl, credentials }, options),
      ),
    ).toBe('FEATURE_NOT_AVAILABLE');
    expect(keyless.seal('org_a', 'sqs', { region: 'us-east-1', queueUrl }, options)).toEqual({
      region: 'us-east-1',
      queueUrl,
    });
  });

  it('leaves other kinds as they are', () => {
    expect(store.open('org_a', 'http', { anything: 1 })).toEqual({ anything: 1 });
  });
});
