import { createHmac, randomBytes } from 'node:crypto';
import { DomainError } from '@hookbase/domain';

/**
 * Standard Webhooks signing: HMAC-SHA256 over `${id}.${timestamp}.${body}`, keyed with the bytes
 * of a `whsec_<base64>` secret, sent as `v1,<base64>`; several signatures are space-separated so
 * a receiver keeps verifying through a secret rotation.
 */

const PREFIX = 'whsec_';
const MIN_SECRET_BYTES = 24;
const MAX_SECRET_BYTES = 64;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export function generateSecret(byteLength = 32): string {
  return PREFIX + randomBytes(byteLength).toString('base64');
}

export function parseSecret(secret: string): Buffer {
  if (!secret.startsWith(PREFIX)) {
    throw new DomainError('INVALID_SECRET', `A signing secret starts with "${PREFIX}"`);
  }
  const encoded = secret.slice(PREFIX.length);
  if (!BASE64.test(encoded)) {
    throw new DomainError('INVALID_SECRET', `A signing secret is "${PREFIX}" followed by base64`);
  }
  const key = Buffer.from(encoded, 'base64');
  if (key.length < MIN_SECRET_BYTES || key.length > MAX_SECRET_BYTES) {
    throw new DomainError(
      'INVALID_SECRET',
      `A signing secret holds ${MIN_SECRET_BYTES} to ${MAX_SECRET_BYTES} bytes (this one: ${key.length})`,
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

export interface SigningInput {
  messageId: string;
  timestampSeconds: number;
  body: string;
  secrets: readonly string[];
}

export function signPayload({ messageId, timestampSeconds, body, secrets }: SigningInput): string {
  if (secrets.length === 0) throw new DomainError('INVALID_SECRET', 'No signing secret');
  const content = `${messageId}.${timestampSeconds}.${body}`;
  return secrets
    .map(
      (secret) =>
        `v1,${createHmac('sha256', parseSecret(secret)).update(content).digest('base64')}`,
    )
    .join(' ');
}

export function webhookHeaders(input: SigningInput): {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
} {
  return {
    'webhook-id': input.messageId,
    'webhook-timestamp': String(input.timestampSeconds),
    'webhook-signature': signPayload(input),
  };
}
