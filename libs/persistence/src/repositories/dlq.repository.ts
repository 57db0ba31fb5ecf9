import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DlqReason, DlqRecord, newId } from '@hookbase/domain';
import { DlqEntryEntity } from '../entities';
import { Page, toPage } from './page';

@Injectable()
export class DlqRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Records dead-lettered messages; a record read twice (at-least-once) is kept once. */
  async record(records: readonly DlqRecord[]): Promise<void> {
    if (records.length === 0) return;
    await this.dataSource.query(
      `INSERT INTO dlq_entries (id, organization_id, message_id, endpoint_id, event_id, event_type,
                                reason, attempts, last_error, last_response_status, created_at)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
                            $7::text[], $8::int[], $9::text[], $10::int[], $11::timestamptz[])
       ON CONFLICT (message_id) DO NOTHING`,
      [
        records.map(() => newId('dlq')),
        records.map((r) => r.organizationId),
        records.map((r) => r.messageId),
        records.map((r) => r.endpointId),
        records.map((r) => r.eventId),
        records.map((r) => r.eventType),
        records.map((r) => r.reason),
        records.map((r) => r.attempts),
        records.map((r) => r.lastError),
        records.map((r) => r.lastResponseStatus),
        records.map((r) => r.deadLetteredAt),
      ],
    );
  }

  find(organizationId: string, id: string): Promise<DlqEntryEntity | null> {
    return this.dataSource.getRepository(DlqEntryEntity).findOneBy({ organizationId, id });
  }

  async markRetried(id: string, retryMessageId: string): Promise<void> {
    await this.dataSource
      .getRepository(DlqEntryEntity)
      .update(id, { retriedAt: new Date(), retryMessageId });
  }

  async list(
    organizationId: string,
    filter: { endpointId?: string; reason?: DlqReason; applicationId?: string },
    options: { limit: number; cursor?: string },
  ): Promise<Page<DlqEntryEntity>> {
    const query = this.dataSource
      .getRepository(DlqEntryEntity)
      .createQueryBuilder('d')
      .where('d.organization_id = :organizationId', { organizationId })
      .orderBy('d.id', 'DESC')
      .take(options.limit + 1);
    if (filter.endpointId) query.andWhere('d.endpoint_id = :endpointId', filter);
    if (filter.reason) query.andWhere('d.reason = :reason', filter);
    if (filter.applicationId) {
      query.andWhere(
        'd.endpoint_id IN (SELECT e.id FROM endpoints e WHERE e.application_id = :applicationId)',
        { applicationId: filter.applicationId },
      );
    }
    if (options.cursor) query.andWhere('d.id < :cursor', { cursor: options.cursor });
    return toPage(await query.getMany(), options.limit);
  }
}
