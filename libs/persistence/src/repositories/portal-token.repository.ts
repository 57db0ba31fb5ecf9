import { Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { newId, Plan } from '@hookbase/domain';
import { PortalTokenEntity } from '../entities';
import { hashApiKey } from './api-key.repository';

/** A portal token that works now, as authentication needs it. */
export interface ActivePortalToken {
  tokenId: string;
  organizationId: string;
  applicationId: string;
  plan: Plan;
  readOnly: boolean;
  expiresAt: Date;
}

/** Portal tokens: issued with a lifetime, found by hash, revoked per application. */
@Injectable()
export class PortalTokenRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** A new token (shown once: only its SHA-256 is kept). */
  async issue(input: {
    organizationId: string;
    applicationId: string;
    readOnly: boolean;
    expiresAt: Date;
  }): Promise<{ token: string; entity: PortalTokenEntity }> {
    const token = `hbp_${randomBytes(32).toString('base64url')}`;
    const entity: PortalTokenEntity = {
      id: newId('ptk'),
      organizationId: input.organizationId,
      applicationId: input.applicationId,
      tokenHash: hashApiKey(token),
      readOnly: input.readOnly,
      createdAt: new Date(),
      expiresAt: input.expiresAt,
      revokedAt: null,
    };
    await this.dataSource.getRepository(PortalTokenEntity).insert(entity);
    return { token, entity };
  }

  /** The token with this hash if it is neither expired nor revoked, and its application exists. */
  async findActiveByHash(tokenHash: string): Promise<ActivePortalToken | null> {
    const rows: {
      id: string;
      organization_id: string;
      application_id: string;
      plan: Plan;
      read_only: boolean;
      expires_at: Date;
    }[] = await this.dataSource.query(
      `SELECT t.id, t.organization_id, t.application_id, o.plan, t.read_only, t.expires_at
         FROM portal_tokens t
         JOIN organizations o ON o.id = t.organization_id
         JOIN applications a ON a.id = t.application_id
        WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND t.expires_at > now()`,
      [tokenHash],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      tokenId: row.id,
      organizationId: row.organization_id,
      applicationId: row.application_id,
      plan: row.plan,
      readOnly: row.read_only,
      expiresAt: row.expires_at,
    };
  }

  /** Revokes every token of the application that still works; answers how many. */
  async revokeAll(organizationId: string, applicationId: string): Promise<number> {
    const [, count]: [unknown, number] = await this.dataSource.query(
      `UPDATE portal_tokens SET revoked_at = now()
        WHERE organization_id = $1 AND application_id = $2 AND revoked_at IS NULL
          AND expires_at > now()`,
      [organizationId, applicationId],
    );
    return count;
  }
}
