import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Replays and DLQ retries create copies of a message: a new row (its own status, attempts and
 * DLQ entry) that points at the message it copies. Only originals are unique per event and
 * endpoint; copies share the original's webhook-id.
 */
export class MessageReplays1764547200000 implements MigrationInterface {
  name = 'MessageReplays1764547200000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      ALTER TABLE messages ADD COLUMN replay_of text;
      DROP INDEX uq_messages_event_endpoint;
      CREATE UNIQUE INDEX uq_messages_event_endpoint ON messages (event_id, endpoint_id)
        WHERE replay_of IS NULL;
      ALTER TABLE dlq_entries ADD COLUMN retried_at timestamptz;
      ALTER TABLE dlq_entries ADD COLUMN retry_message_id text;
    `);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`
      ALTER TABLE dlq_entries DROP COLUMN retry_message_id;
      ALTER TABLE dlq_entries DROP COLUMN retried_at;
      DELETE FROM messages WHERE replay_of IS NOT NULL;
      DROP INDEX uq_messages_event_endpoint;
      CREATE UNIQUE INDEX uq_messages_event_endpoint ON messages (event_id, endpoint_id);
      ALTER TABLE messages DROP COLUMN replay_of;
    `);
  }
}
