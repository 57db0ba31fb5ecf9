import { Injectable } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { newId } from '@hookbase/domain';
import { ApiKeyEntity } from '../entities';

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

@Injectable()
export class ApiKeyRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Creates a key and returns it in clear, the only time it is ever seen. */
  async create(organizationId: string): Promise<{ id: string; key: string }> {
    const key = `hb_${randomBytes(32).toString('base64url')}`;
    const id = newId('key');
    await this.dataSource.getRepository(ApiKeyEntity).insert({
      id,
      organizationId,
      keyHash: hashApiKey(key),
      keyPrefix: key.slice(0, 10),
      createdAt: new Date(),
      revokedAt: null,
    });
    return { id, key };
  }

  async findOrganizationId(key: string): Promise<string | null> {
    const rows: { organization_id: string }[] = await this.dataSource.query(
      'SELECT organization_id FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL',
      [hashApiKey(key)],
    );
    return rows[0]?.organization_id ?? null;
  }
}
