import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

export interface IdempotencyRecord {
  eventId: string;
  eventType: string;
  fingerprint: string;
  payload: Record<string, unknown>;
  endpointIds: string[] | null;
  channels: string[] | null;
  applicationId: string | null;
  createdAt: Date;
  acceptedAt: Date | null;
}

export type Reservation = { kind: 'reserved' } | { kind: 'existing'; record: IdempotencyRecord };

interface Row {
  event_id: string;
  event_type: string;
  fingerprint: string;
  payload: Record<string, unknown>;
  endpoint_ids: string[] | null;
  channels: string[] | null;
  application_id: string | null;
  created_at: Date;
  accepted_at: Date | null;
}

@Injectable()
export class IdempotencyRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Reserves the key for this event, or returns what already holds it. The primary key decides
   * races between concurrent publishes: exactly one insert wins.
   */
  async reserve(input: {
    organizationId: string;
    key: string;
    eventId: string;
    eventType: string;
    fingerprint: string;
    payload: Record<string, unknown>;
    endpointIds: string[] | null;
    channels: string[] | null;
    applicationId: string | null;
    now: Date;
  }): Promise<Reservation> {
    const inserted: unknown[] = await this.dataSource.query(
      `INSERT INTO idempotency_keys
         (organization_id, idempotency_key, event_id, event_type, fingerprint, payload, endpoint_ids,
          created_at, channels, application_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
       ON CONFLICT (organization_id, idempotency_key) DO NOTHING
       RETURNING event_id`,
      [
        input.organizationId,
        input.key,
        input.eventId,
        input.eventType,
        input.fingerprint,
        JSON.stringify(input.payload),
        input.endpointIds,
        input.now,
        input.channels,
        input.applicationId,
      ],
    );
    if (inserted.length === 1) return { kind: 'reserved' };
    const rows: Row[] = await this.dataSource.query(
      `SELECT event_id, event_type, fingerprint, payload, endpoint_ids, channels, application_id,
              created_at, accepted_at
         FROM idempotency_keys WHERE organization_id = $1 AND idempotency_key = $2`,
      [input.organizationId, input.key],
    );
    if (rows.length === 0) return this.reserve(input); // released between our two statements
    const row = rows[0];
    return {
      kind: 'existing',
      record: {
        eventId: row.event_id,
        eventType: row.event_type,
        fingerprint: row.fingerprint,
        payload: row.payload,
        endpointIds: row.endpoint_ids,
        channels: row.channels,
        applicationId: row.application_id,
        createdAt: row.created_at,
        acceptedAt: row.accepted_at,
      },
    };
  }

  async markAccepted(organizationId: string, key: string, acceptedAt: Date): Promise<void> {
    await this.dataSource.query(
      `UPDATE idempotency_keys SET accepted_at = $3
        WHERE organization_id = $1 AND idempotency_key = $2 AND accepted_at IS NULL`,
      [organizationId, key, acceptedAt],
    );
  }

  /** Frees a key whose publish was refused by Kafka, so the client's retry can go through. */
  async release(organizationId: string, key: string, eventId: string): Promise<void> {
    await this.dataSource.query(
      `DELETE FROM idempotency_keys
        WHERE organization_id = $1 AND idempotency_key = $2 AND event_id = $3 AND accepted_at IS NULL`,
      [organizationId, key, eventId],
    );
  }
}
