-- Hookbase outbox, schema version 1. Run once in the producer's own database (PostgreSQL 13+).
-- Events written by publish(input, { transaction }) wait here until the relay has handed them
-- to Hookbase. See the SDK README, "Publish inside your PostgreSQL transaction".

CREATE TABLE hookbase_outbox (
  -- The event's idempotency key at Hookbase unless the caller gave one.
  id uuid PRIMARY KEY,
  -- The order of the rows within one transaction.
  position bigint GENERATED ALWAYS AS IDENTITY,
  -- The writing transaction, joined to its commit number below.
  txid xid8 NOT NULL DEFAULT pg_current_xact_id(),
  event_type text NOT NULL,
  payload jsonb NOT NULL,
  endpoint_ids text[],
  idempotency_key text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  -- Set by the relay once Hookbase has accepted the event (event_id is Hookbase's id for it).
  sent_at timestamptz,
  event_id text,
  -- Set by the relay when Hookbase refused the event for good (400, 409, 413, 422).
  failed_at timestamptz,
  last_error text,
  CONSTRAINT hookbase_outbox_idempotency_key UNIQUE (idempotency_key)
);

CREATE INDEX hookbase_outbox_unsent ON hookbase_outbox (txid, position)
  WHERE sent_at IS NULL AND failed_at IS NULL;

-- One row per committed transaction that wrote to the outbox, numbered in commit order.
CREATE TABLE hookbase_outbox_commits (
  commit_seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  txid xid8 NOT NULL UNIQUE,
  committed_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- Runs at COMMIT (a deferred constraint trigger): takes a transaction-level advisory lock, held
-- until the transaction has committed and become visible, and numbers the transaction under it.
-- So commit_seq follows commit order, and once a number is visible every smaller number that
-- will ever commit is visible too. It also wakes a listening relay (delivered at commit).
CREATE FUNCTION hookbase_outbox_number_commit() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM hookbase_outbox_commits WHERE txid = pg_current_xact_id()) THEN
    PERFORM pg_advisory_xact_lock(1215262571, 1);
    INSERT INTO hookbase_outbox_commits (txid) VALUES (pg_current_xact_id());
    PERFORM pg_notify('hookbase_outbox', '');
  END IF;
  RETURN NULL;
END
$$;

CREATE CONSTRAINT TRIGGER hookbase_outbox_number_commit
  AFTER INSERT ON hookbase_outbox
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION hookbase_outbox_number_commit();
