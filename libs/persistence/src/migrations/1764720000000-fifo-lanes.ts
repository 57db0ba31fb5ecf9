import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * FIFO lanes (ADR 0009): a message queued in an endpoint's lane keeps its place (`fifo_seq`, the
 * offset it was read at on the endpoint's deliveries partition); `fifo_lanes` holds each lane's
 * lease (who runs it, until when) and what its owner says blocks it.
 */
export class FifoLanes1764720000000 implements MigrationInterface {
  name = 'FifoLanes1764720000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      ALTER TABLE messages ADD COLUMN fifo_seq bigint;
      CREATE INDEX idx_messages_fifo_queue ON messages (endpoint_id, fifo_seq)
        WHERE fifo_seq IS NOT NULL AND status IN ('fifo_waiting', 'in_flight', 'awaiting_retry');
      CREATE TABLE fifo_lanes (
        endpoint_id text PRIMARY KEY,
        owner text,
        lease_until timestamptz,
        renewed_at timestamptz,
        blocked_reason text,
        blocked_until timestamptz
      );
    `);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`
      DROP TABLE fifo_lanes;
      DROP INDEX idx_messages_fifo_queue;
      ALTER TABLE messages DROP COLUMN fifo_seq;
    `);
  }
}
