import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Encryption at rest of an endpoint's cloud credentials: AES-256-GCM with a 32-byte key from
 * configuration, a fresh 12-byte IV per encryption, and a versioned envelope
 *
 *   v1:<iv>:<tag>:<ciphertext>        (each part base64)
 *
 * The optional `context` (e.g. the endpoint id) is authenticated but not stored: a ciphertext
 * copied to another endpoint does not decrypt there. Decryption also tries `previousKeys`, so a
 * key can be rotated by re-encrypting with the new key while the old one still reads.
 *
 * Errors never contain the plaintext nor the key.
 */
export const CREDENTIALS_ENVELOPE_VERSION = 'v1';

const ALGORITHM = 'aes-256-gcm';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class CredentialsCipherError extends Error {
  constructor(
    readonly code: 'INVALID_KEY' | 'MALFORMED_ENVELOPE' | 'UNSUPPORTED_VERSION' | 'DECRYPT_FAILED',
    message: string,
  ) {
    super(message);
    this.name = 'CredentialsCipherError';
  }
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function strictBase64(text: string): Buffer | undefined {
  return BASE64.test(text) ? Buffer.from(text, 'base64') : undefined;
}

/** A 32-byte key from its base64 text (e.g. `openssl rand -base64 32`). */
export function parseCredentialsKey(base64: string): Buffer {
  const key = strictBase64(base64.trim());
  if (!key || key.length !== KEY_BYTES) {
    throw new CredentialsCipherError(
      'INVALID_KEY',
      `the credentials key must be ${KEY_BYTES} bytes in base64 (e.g. \`openssl rand -base64 32\`)`,
    );
  }
  return key;
}

/** A fresh random key, in base64 (for development setups and tests). */
export function generateCredentialsKey(): string {
  return randomBytes(KEY_BYTES).toString('base64');
}

export class CredentialsCipher {
  private readonly key: Buffer;
  private readonly readKeys: readonly Buffer[];

  /** What openText opened, by context and envelope, oldest first. */
  private readonly opened = new Map<string, string>();
  private readonly keepOpened: number;

  constructor(
    key: string | Buffer,
    options: {
      previousKeys?: readonly (string | Buffer)[];
      /** How many opened texts it keeps (see openText); 10,000 unless set. */
      keepOpened?: number;
    } = {},
  ) {
    this.keepOpened = options.keepOpened ?? 10_000;
    const toKey = (value: string | Buffer) => {
      if (typeof value === 'string') return parseCredentialsKey(value);
      if (value.length !== KEY_BYTES) {
        throw new CredentialsCipherError(
          'INVALID_KEY',
          `the credentials key must be ${KEY_BYTES} bytes`,
        );
      }
      return Buffer.from(value);
    };
    this.key = toKey(key);
    this.readKeys = [this.key, ...(options.previousKeys ?? []).map(toKey)];
  }

  encrypt(credentials: Record<string, unknown>, context = ''): string {
    return this.sealText(JSON.stringify(credentials), context);
  }

  decrypt(envelope: string, context = ''): Record<string, unknown> {
    const value: unknown = JSON.parse(this.openText(envelope, context));
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new CredentialsCipherError('MALFORMED_ENVELOPE', 'credentials are not an object');
    }
    return value as Record<string, unknown>;
  }

  /** Seals any text (e.g. an endpoint's signing secret) into the same envelope. */
  sealText(plaintext: string, context = ''): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(aad(context));
    const ciphertext = Buffer.concat([
      cipher.update(Buffer.from(plaintext, 'utf8')),
      cipher.final(),
    ]);
    const tag = cipher.getAuthTag();
    return [CREDENTIALS_ENVELOPE_VERSION, iv, tag, ciphertext]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64')))
      .join(':');
  }

  /**
   * Opens an envelope made by sealText (or encrypt) with the same context. What opened is kept:
   * the dispatcher opens an endpoint's secrets, sealed headers and credentials for every batch or
   * attempt, each AES-GCM open costs tens of microseconds (more with previous keys, tried in
   * turn), and an envelope opens to the same text for the life of the cipher (its keys are
   * fixed). At most `keepOpened` texts are kept, the oldest going first; one that does not open
   * is not kept.
   */
  openText(envelope: string, context = ''): string {
    const kept = `${context}\n${envelope}`;
    const known = this.opened.get(kept);
    if (known !== undefined) return known;
    const text = this.openEnvelope(envelope, context);
    if (this.opened.size >= this.keepOpened) this.opened.delete(this.opened.keys().next().value!);
    this.opened.set(kept, text);
    return text;
  }

  private openEnvelope(envelope: string, context: string): string {
    const parts = envelope.split(':');
    if (parts.length !== 4) {
      throw new CredentialsCipherError('MALFORMED_ENVELOPE', 'not a credentials envelope');
    }
    const [version, ivText, tagText, ciphertextText] = parts;
    if (version !== CREDENTIALS_ENVELOPE_VERSION) {
      throw new CredentialsCipherError(
        'UNSUPPORTED_VERSION',
        `credentials envelope version ${JSON.stringify(version.slice(0, 10))} is not supported`,
      );
    }
    const iv = strictBase64(ivText);
    const tag = strictBase64(tagText);
    const ciphertext = strictBase64(ciphertextText);
    if (iv?.length !== IV_BYTES || tag?.length !== TAG_BYTES || !ciphertext) {
      throw new CredentialsCipherError('MALFORMED_ENVELOPE', 'not a credentials envelope');
    }
    for (const key of this.readKeys) {
      try {
        const decipher = createDecipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
        decipher.setAAD(aad(context));
        decipher.setAuthTag(tag);
        return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
      } catch {
        continue; // wrong key, or the envelope was altered: try the next key
      }
    }
    throw new CredentialsCipherError(
      'DECRYPT_FAILED',
      'credentials cannot be decrypted: wrong key, another endpoint, or altered',
    );
  }
}

function aad(context: string): Buffer {
  return Buffer.from(`hookbase-credentials:${context}`, 'utf8');
}
