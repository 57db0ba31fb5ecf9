import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each endpoint's past routings: the event types, channels and filter it had until an edit
 * replaced them or the endpoint was deleted, with when that happened. Recipients are fixed when an
 * event is accepted, but resolved by the fan-out a moment later (longer while it lags): an event
 * accepted before a change is routed by what was in force then (`planMessages`). Written by a
 * trigger, so that no path that edits or deletes an endpoint can leave a change out.
 */
export class EndpointRoutingHistory1765929600000 implements MigrationInterface {
  name = 'EndpointRoutingHistory1765929600000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE endpoint_routing_history (
        endpoint_id text NOT NULL REFERENCES endpoints (id),
        organization_id text NOT NULL,
        event_types text[] NOT NULL,
        channels text[] NOT NULL,
        filter jsonb,
        replaced_at timestamptz NOT NULL
      )
    `);
    await runner.query(`
      CREATE INDEX endpoint_routing_history_by_organization
        ON endpoint_routing_history (organization_id, replaced_at)
    `);
    // The routing a live endpoint had, written when it is replaced: by an edit of its types,
    // channels or filter, or by its deletion. The statement's clock, not the transaction's, to the
    // millisecond: the time is compared with events' acceptance times, which have milliseconds.
    await runner.query(`
      CREATE FUNCTION endpoint_routing_replaced() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO endpoint_routing_history
          (endpoint_id, organization_id, event_types, channels, filter, replaced_at)
          VALUES (OLD.id, OLD.organization_id, OLD.event_types, OLD.channels, OLD.filter,
                  date_trunc('milliseconds', clock_timestamp()));
        RETURN NULL;
      END $$
    `);
    await runner.query(`
      CREATE TRIGGER endpoints_routing_replaced AFTER UPDATE ON endpoints
        FOR EACH ROW WHEN (
          OLD.deleted_at IS NULL AND (
            NEW.deleted_at IS NOT NULL
            OR OLD.event_types IS DISTINCT FROM NEW.event_types
            OR OLD.channels IS DISTINCT FROM NEW.channels
            OR OLD.filter IS DISTINCT FROM NEW.filter))
        EXECUTE FUNCTION endpoint_routing_replaced()
    `);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TRIGGER endpoints_routing_replaced ON endpoints`);
    await runner.query(`DROP FUNCTION endpoint_routing_replaced()`);
    await runner.query(`DROP TABLE endpoint_routing_history`);
  }
}
