import { Injectable } from '@nestjs/common';
import { hash, randomBytes } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { API_KEY_PREFIX_LENGTH, newId, Plan } from '@hookbase/domain';
import { ApiKeyEntity } from '../entities';

export function hashApiKey(key: string): string {
  // One-shot: half the cost of a Hash object, and it runs on every authenticated request.
  return hash('sha256', key, 'hex');
}

/** A key that is active now, as authentication needs it. */
export interface ActiveApiKey {
  keyId: string;
  organizationId: string;
  plan: Plan;
  expiresAt: Date | null;
}

export interface NewApiKey {
  name?: string | null;
  expiresAt?: Date | null;
}

/** What the answer to a create or a rotation holds: the key in clear, shown only then. */
export interface IssuedApiKey {
  entity: ApiKeyEntity;
  key: string;
}

@Injectable()
export class ApiKeyRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Creates a key and returns it in clear, the only time it is ever seen. */
  async create(organizationId: string, input: NewApiKey = {}): Promise<IssuedApiKey> {
    return this.insert(this.dataSource.manager, organizationId, input);
  }

  /**
   * The active key with this hash (not revoked, not expired, its organization's plan), noting
   * that it was used; null for any other. Only a hash is ever sent to PostgreSQL.
   */
  async findActiveByHash(keyHash: string): Promise<ActiveApiKey | null> {
    const [rows]: [
      { id: string; organization_id: string; plan: Plan; expires_at: Date | null }[],
      number,
    ] = await this.dataSource.query(
      `UPDATE api_keys k SET last_used_at = now()
         FROM organizations o
        WHERE k.key_hash = $1 AND o.id = k.organization_id
          AND (k.revoked_at IS NULL OR k.revoked_at > now())
          AND (k.expires_at IS NULL OR k.expires_at > now())
        RETURNING k.id, k.organization_id, o.plan, k.expires_at`,
      [keyHash],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      keyId: row.id,
      organizationId: row.organization_id,
      plan: row.plan,
      expiresAt: row.expires_at,
    };
  }

  /** Every key of the organization, newest first (revoked and expired ones included). */
  list(organizationId: string): Promise<ApiKeyEntity[]> {
    return this.dataSource.getRepository(ApiKeyEntity).find({
      where: { organizationId },
      order: { createdAt: 'DESC', id: 'DESC' },
    });
  }

  find(organizationId: string, keyId: string): Promise<ApiKeyEntity | null> {
    return this.dataSource.getRepository(ApiKeyEntity).findOneBy({ organizationId, id: keyId });
  }

  /** Revokes a key now; one already revoked keeps its first revocation time. Null: no such key. */
  async revoke(organizationId: string, keyId: string): Promise<ApiKeyEntity | null> {
    await this.dataSource.query(
      `UPDATE api_keys SET revoked_at = now()
        WHERE organization_id = $1 AND id = $2 AND (revoked_at IS NULL OR revoked_at > now())`,
      [organizationId, keyId],
    );
    return this.find(organizationId, keyId);
  }

  /**
   * Replaces a key by a new one with the same name and expiry. The old key is revoked at once
   * (overlap 0) or expires after the overlap (never later than it would have). Null: no such key;
   * `revoked`: the key was revoked or had expired, so there is nothing to rotate.
   */
  async rotate(
    organizationId: string,
    keyId: string,
    overlapSeconds: number,
  ): Promise<{ issued: IssuedApiKey; old: ApiKeyEntity } | null | 'revoked'> {
    return this.dataSource.transaction(async (tx) => {
      const rows: { id: string; active: boolean }[] = await tx.query(
        `SELECT id, (revoked_at IS NULL OR revoked_at > now())
                AND (expires_at IS NULL OR expires_at > now()) AS active
           FROM api_keys WHERE organization_id = $1 AND id = $2 FOR UPDATE`,
        [organizationId, keyId],
      );
      if (rows.length === 0) return null;
      if (!rows[0].active) return 'revoked';
      const old = await tx.getRepository(ApiKeyEntity).findOneByOrFail({ id: keyId });
      if (overlapSeconds === 0) {
        await tx.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [keyId]);
      } else {
        await tx.query(
          `UPDATE api_keys
              SET expires_at = LEAST(COALESCE(expires_at, 'infinity'), now() + make_interval(secs => $2))
            WHERE id = $1`,
          [keyId, overlapSeconds],
        );
      }
      const issued = await this.insert(tx, organizationId, {
        name: old.name,
        expiresAt: old.expiresAt,
      });
      const after = await tx.getRepository(ApiKeyEntity).findOneByOrFail({ id: keyId });
      return { issued, old: after };
    });
  }

  private async insert(
    manager: EntityManager,
    organizationId: string,
    input: NewApiKey,
  ): Promise<IssuedApiKey> {
    const key = `hb_${randomBytes(32).toString('base64url')}`;
    const entity: ApiKeyEntity = {
      id: newId('key'),
      organizationId,
      keyHash: hashApiKey(key),
      keyPrefix: key.slice(0, API_KEY_PREFIX_LENGTH),
      name: input.name ?? null,
      createdAt: new Date(),
      expiresAt: input.expiresAt ?? null,
      revokedAt: null,
      lastUsedAt: null,
    };
    await manager.getRepository(ApiKeyEntity).insert(entity);
    return { entity, key };
  }
}
