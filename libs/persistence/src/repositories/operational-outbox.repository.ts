import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { EventEnvelope } from '@hookbase/domain';

/** Runs a statement: the data source, or a transaction's manager. */
type Runner = Pick<EntityManager, 'query'>;

/**
 * Operational events waiting for the relay (`operational_outbox`). Several relays (every process
 * that writes operational events runs one) drain it together: each takes rows no other holds.
 */
@Injectable()
export class OperationalOutboxRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Adds events, in the caller's transaction when given one. */
  async add(envelopes: readonly EventEnvelope[], runner: Runner = this.dataSource): Promise<void> {
    if (envelopes.length === 0) return;
    await runner.query(
      `INSERT INTO operational_outbox (organization_id, envelope)
       SELECT o, e FROM unnest($1::text[], $2::jsonb[]) AS u(o, e)`,
      [envelopes.map((e) => e.organizationId), envelopes.map((e) => JSON.stringify(e))],
    );
  }

  /**
   * Takes up to `limit` waiting events, oldest first, that no other relay holds, and hands them to
   * `send`; they are removed once it returns, and stay (for the next try) when it throws.
   * Returns how many were sent.
   */
  async drain(limit: number, send: (envelopes: EventEnvelope[]) => Promise<void>): Promise<number> {
    return this.dataSource.transaction(async (manager) => {
      const rows: { id: string; envelope: EventEnvelope }[] = await manager.query(
        `SELECT id, envelope FROM operational_outbox ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [limit],
      );
      if (rows.length === 0) return 0;
      await send(rows.map((row) => row.envelope));
      await manager.query(`DELETE FROM operational_outbox WHERE id = ANY($1::bigint[])`, [
        rows.map((row) => row.id),
      ]);
      return rows.length;
    });
  }
}
