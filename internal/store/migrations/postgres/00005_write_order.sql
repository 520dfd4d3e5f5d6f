-- +goose Up
-- The order in which rows were written. Ids begin with a millisecond
-- timestamp followed by random bits, so rows written in the same
-- millisecond (a debit and its refund, the SENT and DELIVERED events of one
-- report) sort at random by id. Lists that promise "oldest first" or
-- "newest first" order by seq instead. SQLite uses its rowid, which is
-- the same thing (max + 1 at each insert).
ALTER TABLE ledger ADD COLUMN seq BIGSERIAL;
ALTER TABLE messages ADD COLUMN seq BIGSERIAL;
ALTER TABLE webhook_events ADD COLUMN seq BIGSERIAL;
ALTER TABLE webhook_attempts ADD COLUMN seq BIGSERIAL;
ALTER TABLE inbound_messages ADD COLUMN seq BIGSERIAL;
ALTER TABLE api_keys ADD COLUMN seq BIGSERIAL;
CREATE INDEX ledger_account_seq ON ledger (account_id, seq);
CREATE INDEX messages_account_seq ON messages (account_id, seq);
CREATE INDEX messages_phone_seq ON messages (account_id, to_phone, seq);
CREATE INDEX webhook_events_message_seq ON webhook_events (message_id, seq);
CREATE INDEX webhook_events_account_seq ON webhook_events (account_id, seq);
CREATE INDEX webhook_attempts_event_seq ON webhook_attempts (event_id, seq);

-- +goose Down
DROP INDEX webhook_attempts_event_seq;
DROP INDEX webhook_events_account_seq;
DROP INDEX webhook_events_message_seq;
DROP INDEX messages_phone_seq;
DROP INDEX messages_account_seq;
DROP INDEX ledger_account_seq;
ALTER TABLE api_keys DROP COLUMN seq;
ALTER TABLE inbound_messages DROP COLUMN seq;
ALTER TABLE webhook_attempts DROP COLUMN seq;
ALTER TABLE webhook_events DROP COLUMN seq;
ALTER TABLE messages DROP COLUMN seq;
ALTER TABLE ledger DROP COLUMN seq;
