import { createHmac, randomBytes } from 'node:crypto';
import { DomainError } from '@hookbase/domain';
import { SigningKeys } from './signing-keys';

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com, symmetric scheme): HMAC-SHA256
 * over `${id}.${timestamp}.${body}`, keyed with the bytes of a `whsec_<base64>` secret, sent as
 * `v1,<base64>`. During a secret rotation every active secret signs and the signatures are
 * space-separated, so a receiver holding either secret keeps verifying.
 */

const SECRET_PREFIX = 'whsec_';
/** The specification's bounds: at least 192 bits, at most 512. */
export const SECRET_BYTES = { min: 24, max: 64 } as const;
// Standard, padded base64 only: Buffer.from would silently skip stray characters and accept the
// URL-safe alphabet, turning a mistyped secret into a different key.
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export interface SigningInput {
  /** The message id: the same on every retry and replay, so receivers can deduplicate. */
  messageId: string;
  /** When this attempt is sent, in whole seconds since the epoch. */
  timestampSeconds: number;
  /** The exact bytes sent as the request body. */
  body: string;
  /** Every secret that signs, active ones of a rotation included; at least one. */
  secrets: readonly string[];
}

export interface StandardWebhookHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** A new secret: `whsec_` and the base64 of `byteLength` random bytes. */
export function generateSecret(byteLength = 32): string {
  if (
    !Number.isInteger(byteLength) ||
    byteLength < SECRET_BYTES.min ||
    byteLength > SECRET_BYTES.max
  ) {
    throw new DomainError(
      'INVALID_SECRET',
      `A signing secret holds ${SECRET_BYTES.min} to ${SECRET_BYTES.max} bytes, not ${byteLength}`,
    );
  }
  return SECRET_PREFIX + randomBytes(byteLength).toString('base64');
}

/** The key bytes of a secret; INVALID_SECRET unless it is `whsec_` + base64 of 24 to 64 bytes. */
export function parseSecret(secret: string): Buffer {
  // Messages never quote the secret: they end up in responses and logs.
  if (!secret.startsWith(SECRET_PREFIX)) {
    throw new DomainError('INVALID_SECRET', `A signing secret starts with "${SECRET_PREFIX}"`);
  }
  const encoded = secret.slice(SECRET_PREFIX.length);
  if (!BASE64.test(encoded)) {
    throw new DomainError(
      'INVALID_SECRET',
      `A signing secret is "${SECRET_PREFIX}" followed by standard, padded base64`,
    );
  }
  const key = Buffer.from(encoded, 'base64');
  if (key.length < SECRET_BYTES.min || key.length > SECRET_BYTES.max) {
    throw new DomainError(
      'INVALID_SECRET',
      `A signing secret holds ${SECRET_BYTES.min} to ${SECRET_BYTES.max} bytes, not ${key.length}`,
    );
  }
  return key;
}

export function isValidSecret(secret: string): boolean {
  try {
    parseSecret(secret);
    return true;
  } catch {
    return false;
  }
}

const signingKeys = new SigningKeys(parseSecret);

/** The `webhook-signature` header value: one `v1,<base64>` per secret, space-separated. */
export function signPayload({ messageId, timestampSeconds, body, secrets }: SigningInput): string {
  if (secrets.length === 0) {
    throw new DomainError('INVALID_SECRET', 'At least one signing secret is needed to sign');
  }
  // The three parts are joined with dots, so an id with a dot would make the signed content
  // ambiguous; a fractional or negative timestamp would fail every receiver's check.
  if (messageId === '' || messageId.includes('.')) {
    throw new DomainError('INTERNAL', `A message id to sign must be non-empty, without "."`);
  }
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) {
    throw new DomainError(
      'INTERNAL',
      `A signing timestamp is whole seconds, not ${timestampSeconds}`,
    );
  }
  const content = `${messageId}.${timestampSeconds}.${body}`;
  return secrets
    .map((secret) => {
      const signature = createHmac('sha256', signingKeys.keyOf(secret))
        .update(content)
        .digest('base64');
      return `v1,${signature}`;
    })
    .join(' ');
}

/** The three Standard Webhooks headers of one attempt. */
export function webhookHeaders(input: SigningInput): StandardWebhookHeaders {
  return {
    'webhook-id': input.messageId,
    'webhook-timestamp': String(input.timestampSeconds),
    'webhook-signature': signPayload(input),
  };
}
