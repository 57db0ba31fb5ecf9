import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An event keeps the W3C `traceparent` of its fan-out (null when tracing is off), so attempts
 * started from the store (retries, FIFO lanes) join the event's trace. Nullable, no default: adding
 * it rewrites nothing.
 */
export class EventTraceParent1765324800000 implements MigrationInterface {
  name = 'EventTraceParent1765324800000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE events ADD COLUMN trace_parent text`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE events DROP COLUMN trace_parent`);
  }
}
