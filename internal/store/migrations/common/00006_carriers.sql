-- +goose Up
-- What real carriers need (times in Unix milliseconds, as everywhere).

-- The parts of a message a provider took in several pieces (SMPP segments):
-- one row per part, named by the provider's id for it. Receipts come per
-- part; a long message is DELIVERED once every part is, FAILED as soon as
-- one part fails.
CREATE TABLE message_parts (
    provider   TEXT NOT NULL,
    ref        TEXT NOT NULL,
    message_id TEXT NOT NULL,
    part       INTEGER NOT NULL,
    parts      INTEGER NOT NULL,
    status     TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (provider, ref)
);
CREATE INDEX message_parts_message ON message_parts (message_id);

-- Reports that name a provider id no message carries yet: a receipt can
-- overtake the answer to its own submission. They are applied when the
-- submission's answer records the id, and dropped after a while.
CREATE TABLE pending_reports (
    provider      TEXT NOT NULL,
    ref           TEXT NOT NULL,
    status        TEXT NOT NULL,
    error_code    TEXT NOT NULL DEFAULT '',
    error_message TEXT NOT NULL DEFAULT '',
    reported_at   BIGINT NOT NULL,
    received_at   BIGINT NOT NULL,
    PRIMARY KEY (provider, ref, status)
);
CREATE INDEX pending_reports_received ON pending_reports (received_at);

-- Approved senders: alphanumeric sender IDs and numbers (SMS), business
-- numbers (WhatsApp), agents (RCS), per account and channel; at most one
-- default per account and channel.
CREATE TABLE senders (
    id         TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    channel    TEXT NOT NULL,
    value      TEXT NOT NULL,
    is_default INTEGER NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX senders_value ON senders (account_id, channel, value);

-- The sender a message goes out with, as the send gave it or the default.
ALTER TABLE messages ADD COLUMN from_addr TEXT NOT NULL DEFAULT '';

-- The account's approved senders again, as JSON by channel, kept in step
-- with the senders table in the same transactions: the account row is read
-- with the API key on every request, so a send checks its sender for free.
ALTER TABLE accounts ADD COLUMN senders TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE accounts DROP COLUMN senders;
ALTER TABLE messages DROP COLUMN from_addr;
DROP TABLE senders;
DROP TABLE pending_reports;
DROP TABLE message_parts;
