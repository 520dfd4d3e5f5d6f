-- +goose Up
-- No query finds ledger lines by their message: the ledger is read by
-- account (its page, its sum), and a refund takes its amount from the
-- message's own charged column. The index cost every charge an entry, a
-- B-tree touched by every transaction that sends.
DROP INDEX ledger_message;

-- +goose Down
CREATE INDEX ledger_message ON ledger (message_id) WHERE message_id <> '';
