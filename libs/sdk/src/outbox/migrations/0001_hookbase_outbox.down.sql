-- Removes the Hookbase outbox (and any event not yet relayed).
DROP TABLE IF EXISTS hookbase_outbox;
DROP TABLE IF EXISTS hookbase_outbox_commits;
DROP FUNCTION IF EXISTS hookbase_outbox_number_commit();
