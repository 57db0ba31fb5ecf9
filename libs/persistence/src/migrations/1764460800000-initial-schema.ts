import { MigrationInterface, QueryRunner } from 'typeorm';

/** The walking skeleton's schema: organizations, keys, endpoints, events, messages, attempts, DLQ. */
export class InitialSchema1764460800000 implements MigrationInterface {
  name = 'InitialSchema1764460800000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE organizations (
        id text PRIMARY KEY,
        name text NOT NULL,
        plan text NOT NULL CHECK (plan IN ('free', 'pro', 'business')),
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      );
      CREATE TABLE api_keys (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        key_hash text NOT NULL,
        key_prefix text NOT NULL,
        created_at timestamptz NOT NULL,
        revoked_at timestamptz
      );
      CREATE UNIQUE INDEX uq_api_keys_key_hash ON api_keys (key_hash);
      CREATE INDEX idx_api_keys_organization ON api_keys (organization_id);

      CREATE TABLE endpoints (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        kind text NOT NULL,
        url text,
        description text,
        config jsonb NOT NULL DEFAULT '{}',
        event_types text[] NOT NULL DEFAULT '{}',
        status text NOT NULL CHECK (status IN ('active', 'paused', 'disabled')),
        fifo_enabled boolean NOT NULL DEFAULT false,
        retry jsonb NOT NULL,
        rate_limit_per_second integer,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        deleted_at timestamptz
      );
      CREATE INDEX idx_endpoints_organization ON endpoints (organization_id, id);

      CREATE TABLE endpoint_secrets (
        id text PRIMARY KEY,
        endpoint_id text NOT NULL REFERENCES endpoints(id) ON DELETE CASCADE,
        secret text NOT NULL,
        created_at timestamptz NOT NULL,
        expires_at timestamptz
      );
      CREATE INDEX idx_endpoint_secrets_endpoint ON endpoint_secrets (endpoint_id, created_at);

      CREATE TABLE idempotency_keys (
        organization_id text NOT NULL,
        idempotency_key text NOT NULL,
        event_id text NOT NULL,
        event_type text NOT NULL,
        fingerprint text NOT NULL,
        payload jsonb NOT NULL,
        endpoint_ids text[],
        created_at timestamptz NOT NULL,
        accepted_at timestamptz,
        PRIMARY KEY (organization_id, idempotency_key)
      );

      CREATE TABLE events (
        id text PRIMARY KEY,
        organization_id text NOT NULL,
        event_type text NOT NULL,
        payload jsonb NOT NULL,
        idempotency_key text,
        accepted_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL
      );
      CREATE INDEX idx_events_organization ON events (organization_id, id);

      CREATE TABLE messages (
        id text PRIMARY KEY,
        organization_id text NOT NULL,
        event_id text NOT NULL,
        endpoint_id text NOT NULL,
        event_type text NOT NULL,
        status text NOT NULL,
        attempts integer NOT NULL DEFAULT 0,
        max_attempts integer NOT NULL,
        next_attempt_at timestamptz,
        last_response_status integer,
        last_error text,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        finished_at timestamptz
      );
      CREATE UNIQUE INDEX uq_messages_event_endpoint ON messages (event_id, endpoint_id);
      CREATE INDEX idx_messages_organization ON messages (organization_id, id);
      CREATE INDEX idx_messages_endpoint ON messages (endpoint_id, id);
      -- The retry schedule: messages waiting for a later attempt, and leases of claimed ones.
      CREATE INDEX idx_messages_due ON messages (next_attempt_at)
        WHERE status IN ('awaiting_retry', 'in_flight') AND next_attempt_at IS NOT NULL;

      CREATE TABLE attempts (
        id text PRIMARY KEY,
        message_id text NOT NULL,
        attempt_number integer NOT NULL,
        started_at timestamptz NOT NULL,
        duration_ms integer NOT NULL,
        outcome text NOT NULL,
        response_status integer,
        response_excerpt text,
        error text
      );
      CREATE INDEX idx_attempts_message ON attempts (message_id, attempt_number);

      CREATE TABLE dlq_entries (
        id text PRIMARY KEY,
        organization_id text NOT NULL,
        message_id text NOT NULL,
        endpoint_id text NOT NULL,
        event_id text NOT NULL,
        event_type text NOT NULL,
        reason text NOT NULL,
        attempts integer NOT NULL,
        last_error text,
        last_response_status integer,
        created_at timestamptz NOT NULL
      );
      CREATE UNIQUE INDEX uq_dlq_entries_message ON dlq_entries (message_id);
      CREATE INDEX idx_dlq_entries_organization ON dlq_entries (organization_id, id);
    `);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`
      DROP TABLE dlq_entries; DROP TABLE attempts; DROP TABLE messages; DROP TABLE events;
      DROP TABLE idempotency_keys; DROP TABLE endpoint_secrets; DROP TABLE endpoints;
      DROP TABLE api_keys; DROP TABLE organizations;
    `);
  }
}
