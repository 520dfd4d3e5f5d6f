-- +goose Up
-- Narrower indexes for the hot path. Every message, ledger line, webhook
-- event and attempt adds an entry to each index of its table, and on
-- SQLite an index on (x) already orders its entries by rowid within x,
-- which is the write order every list here uses: the trailing id made each
-- entry about twice as large (more pages written per commit) and sorted by
-- the wrong thing.
DROP INDEX messages_account;
CREATE INDEX messages_account ON messages (account_id);
DROP INDEX messages_phone;
CREATE INDEX messages_phone ON messages (account_id, to_phone);
DROP INDEX ledger_account;
CREATE INDEX ledger_account ON ledger (account_id);
DROP INDEX webhook_events_message;
CREATE INDEX webhook_events_message ON webhook_events (message_id);
DROP INDEX webhook_events_account;
CREATE INDEX webhook_events_account ON webhook_events (account_id);
DROP INDEX webhook_attempts_event;
CREATE INDEX webhook_attempts_event ON webhook_attempts (event_id);

-- +goose Down
DROP INDEX webhook_attempts_event;
CREATE INDEX webhook_attempts_event ON webhook_attempts (event_id, id);
DROP INDEX webhook_events_account;
CREATE INDEX webhook_events_account ON webhook_events (account_id, id);
DROP INDEX webhook_events_message;
CREATE INDEX webhook_events_message ON webhook_events (message_id, id);
DROP INDEX ledger_account;
CREATE INDEX ledger_account ON ledger (account_id, id);
DROP INDEX messages_phone;
CREATE INDEX messages_phone ON messages (account_id, to_phone, id);
DROP INDEX messages_account;
CREATE INDEX messages_account ON messages (account_id, id);
