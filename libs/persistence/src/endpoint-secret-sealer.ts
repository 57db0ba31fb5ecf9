import { Logger } from '@nestjs/common';
import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import { CredentialsCipher } from '@hookbase/destinations';

/**
 * Endpoint signing secrets at rest (ADR 0017): sealed with HOOKBASE_CREDENTIALS_KEY into the same
 * AES-256-GCM envelope as cloud credentials (`v1:<iv>:<tag>:<ciphertext>`), bound to the endpoint
 * (the envelope's authenticated context), so a sealed secret copied to another endpoint's row
 * does not open there.
 *
 * Without a key (refused in production, see the configuration) secrets are stored as they are,
 * `whsec_…`; what is stored says which it is, so rows written before a key was configured are
 * still read, and are sealed by the next boot that has one.
 */
export interface SecretSealer {
  /** Whether secrets written now are sealed (a key is configured). */
  readonly seals: boolean;
  seal(secret: string, endpointId: string): string;
  open(stored: string, endpointId: string): string;
}

export const SECRET_SEALER = Symbol('SECRET_SEALER');

const PLAINTEXT_PREFIX = 'whsec_';

export function isPlaintextSecret(stored: string): boolean {
  return stored.startsWith(PLAINTEXT_PREFIX);
}

function context(endpointId: string): string {
  return `endpoint-secret:${endpointId}`;
}

export class EndpointSecretSealer implements SecretSealer {
  private readonly cipher: CredentialsCipher | undefined;

  constructor(settings: { key: string | undefined; previousKeys?: readonly string[] }) {
    this.cipher =
      settings.key === undefined
        ? undefined
        : new CredentialsCipher(settings.key, { previousKeys: settings.previousKeys ?? [] });
  }

  get seals(): boolean {
    return this.cipher !== undefined;
  }

  seal(secret: string, endpointId: string): string {
    return this.cipher ? this.cipher.sealText(secret, context(endpointId)) : secret;
  }

  open(stored: string, endpointId: string): string {
    if (isPlaintextSecret(stored)) return stored;
    if (!this.cipher) {
      throw new Error(
        `endpoint ${endpointId} has a sealed signing secret but HOOKBASE_CREDENTIALS_KEY is not configured`,
      );
    }
    // Kept by the cipher once opened: the dispatcher opens the secrets of every batch it reads.
    return this.cipher.openText(stored, context(endpointId));
  }
}

/**
 * Which sealer the migrations of a data source use (runMigrations registers it): TypeORM builds
 * migrations without arguments, so the one that seals secrets finds its key here.
 */
const migrationSealers = new WeakMap<DataSource, SecretSealer>();

export function registerMigrationSealer(dataSource: DataSource, sealer: SecretSealer): void {
  migrationSealers.set(dataSource, sealer);
}

export function migrationSealerFor(dataSource: DataSource): SecretSealer | undefined {
  return migrationSealers.get(dataSource);
}

const logger = new Logger('EndpointSecrets');

/**
 * Seals every signing secret still stored in plain text; returns how many. Without a key it
 * leaves them, says so, and returns 0: the next boot with a key seals them.
 */
export async function sealPlaintextSecrets(
  db: QueryRunner | EntityManager,
  sealer: SecretSealer | undefined,
): Promise<number> {
  const rows = (await db.query(
    `SELECT id, endpoint_id, secret FROM endpoint_secrets WHERE starts_with(secret, $1) FOR UPDATE`,
    [PLAINTEXT_PREFIX],
  )) as { id: string; endpoint_id: string; secret: string }[];
  if (rows.length === 0) return 0;
  if (!sealer?.seals) {
    logger.warn(
      `${rows.length} endpoint signing secret(s) are stored in plain text: they are sealed at the ` +
        'next start with HOOKBASE_CREDENTIALS_KEY configured',
    );
    return 0;
  }
  for (const row of rows) {
    await db.query('UPDATE endpoint_secrets SET secret = $2 WHERE id = $1', [
      row.id,
      sealer.seal(row.secret, row.endpoint_id),
    ]);
  }
  return rows.length;
}
