-- +goose Up
-- Narrower indexes for the hot path. Every list orders by seq (migration
-- 00005 added an index on (…, seq) beside each of these), so the (…, id)
-- indexes served no query, while every message, ledger line, webhook event
-- and attempt paid an entry in each, and every update of a message or an
-- event that is not HOT (a status change is not: it moves partial indexes)
-- paid a new entry in each again.
DROP INDEX messages_account;
DROP INDEX messages_phone;
DROP INDEX ledger_account;
DROP INDEX webhook_events_message;
DROP INDEX webhook_events_account;
DROP INDEX webhook_attempts_event;

-- +goose Down
CREATE INDEX webhook_attempts_event ON webhook_attempts (event_id, id);
CREATE INDEX webhook_events_account ON webhook_events (account_id, id);
CREATE INDEX webhook_events_message ON webhook_events (message_id, id);
CREATE INDEX ledger_account ON ledger (account_id, id);
CREATE INDEX messages_phone ON messages (account_id, to_phone, id);
CREATE INDEX messages_account ON messages (account_id, id);
