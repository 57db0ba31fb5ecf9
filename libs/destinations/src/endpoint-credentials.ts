import { DomainError, type HostIdentityGrant } from '@hookbase/domain';
import { checkCloudIdentity } from './cloud-support';
import { CredentialsCipher } from './credentials-cipher';
import {
  changedTargetFields,
  isCloudDestinationKind,
  parseDestinationConfig,
  type CloudDestinationKind,
} from './destination-config';

/**
 * How a cloud endpoint's `config` is stored: the validated config without its `credentials`, which
 * are kept beside it as one AES-256-GCM envelope under ENCRYPTED_CREDENTIALS_FIELD. No client can
 * send that field (every config schema is strict), so a stored envelope always came from here.
 *
 * The envelope is bound to the organization and the endpoint kind (the cipher's authenticated
 * context): copied into another organization's endpoint, it does not decrypt.
 */
export const ENCRYPTED_CREDENTIALS_FIELD = 'encryptedCredentials';

export function credentialsContext(organizationId: string, kind: CloudDestinationKind): string {
  return `endpoint:${organizationId}:${kind}`;
}

/** The config as the API shows it: never the credentials, nor their envelope. */
export function publicEndpointConfig(stored: Record<string, unknown>): Record<string, unknown> {
  const shown = { ...stored };
  delete shown[ENCRYPTED_CREDENTIALS_FIELD];
  delete shown.credentials;
  return shown;
}

export function hasStoredCredentials(stored: Record<string, unknown>): boolean {
  return typeof stored[ENCRYPTED_CREDENTIALS_FIELD] === 'string';
}

/** Seals and opens the credentials of cloud endpoints' configs (one per process). */
export class EndpointCredentials {
  private readonly cipher: CredentialsCipher | undefined;

  constructor(settings: { key: string | undefined; previousKeys?: readonly string[] }) {
    this.cipher =
      settings.key === undefined
        ? undefined
        : new CredentialsCipher(settings.key, { previousKeys: settings.previousKeys ?? [] });
  }

  /**
   * Validates a cloud endpoint's config as a client sent it (VALIDATION_FAILED naming the field,
   * URL_NOT_ALLOWED / INVALID_URL for an endpoint override) and returns what to store.
   *
   * `current` is the stored config on a PATCH: a config without `credentials` keeps the stored
   * ones, `credentials: null` removes them, new ones replace them. Stored credentials are bound
   * to the target they were given for: a config that changes a target field (region, endpoint,
   * project, queue, topic, bus, bucket) and keeps them is refused (CREDENTIALS_TARGET_CHANGED).
   * A config left without credentials needs the organization's `hostIdentity` grant to cover its
   * target, and no endpoint override (CREDENTIALS_REQUIRED). Refuses credentials with
   * FEATURE_NOT_AVAILABLE when no key is configured.
   */
  seal(
    organizationId: string,
    kind: CloudDestinationKind,
    raw: Record<string, unknown> | undefined,
    options: {
      allowPrivateTargets: boolean;
      current?: Record<string, unknown>;
      hostIdentity: HostIdentityGrant | null;
    },
  ): Record<string, unknown> {
    const input = { ...(raw ?? {}) };
    const clear = input.credentials === null;
    if (clear) delete input.credentials;
    const { credentials, ...config } = parseDestinationConfig(kind, input, {
      allowPrivateTargets: options.allowPrivateTargets,
    }) as Record<string, unknown>;
    if (credentials !== undefined) {
      if (!this.cipher) {
        throw new DomainError(
          'FEATURE_NOT_AVAILABLE',
          'config.credentials cannot be stored: this installation has no HOOKBASE_CREDENTIALS_KEY',
        );
      }
      const envelope = this.cipher.encrypt(
        credentials as Record<string, unknown>,
        credentialsContext(organizationId, kind),
      );
      return { ...config, [ENCRYPTED_CREDENTIALS_FIELD]: envelope };
    }
    const kept = clear ? undefined : options.current?.[ENCRYPTED_CREDENTIALS_FIELD];
    if (typeof kept === 'string') {
      const changed = changedTargetFields(kind, publicEndpointConfig(options.current!), config);
      if (changed.length > 0) {
        throw new DomainError(
          'CREDENTIALS_TARGET_CHANGED',
          `config.credentials must be sent again to change ${changed.join(', ')}: stored credentials stay bound to the target they were given for`,
          { fields: changed },
        );
      }
      return { ...config, [ENCRYPTED_CREDENTIALS_FIELD]: kept };
    }
    checkCloudIdentity(kind, config, options.hostIdentity);
    return config;
  }

  /**
   * The config an adapter is given: the stored one with its credentials decrypted. Other kinds'
   * configs are returned as they are. Throws a CredentialsCipherError (never with the plaintext)
   * when the envelope cannot be opened, e.g. without the key it was sealed with.
   */
  open(
    organizationId: string,
    kind: string,
    stored: Record<string, unknown>,
  ): Record<string, unknown> {
    if (!isCloudDestinationKind(kind) || !hasStoredCredentials(stored)) return stored;
    const { [ENCRYPTED_CREDENTIALS_FIELD]: envelope, ...config } = stored;
    if (!this.cipher) {
      throw new DomainError(
        'FEATURE_NOT_AVAILABLE',
        'the endpoint has stored credentials but HOOKBASE_CREDENTIALS_KEY is not configured',
      );
    }
    const credentials = this.cipher.decrypt(
      envelope as string,
      credentialsContext(organizationId, kind),
    );
    return { ...config, credentials };
  }
}
