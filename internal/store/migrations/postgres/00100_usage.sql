-- +goose Up
-- What each account's environment sent per UTC day, channel and calling
-- code (messages, segments, credits and the messages by current status), kept in the transactions that charge and refund messages, so a
-- usage report reads a few rows per day instead of every message. Writers
-- of PostgreSQL nodes each keep their own rows (holder), as they keep
-- their own balance shares; SQLite has one writer and one row per key.
-- A report is one range of the primary key.
CREATE TABLE usage_days (
    account_id TEXT NOT NULL,
    env        TEXT NOT NULL,
    day        BIGINT NOT NULL, -- days since 1970-01-01 UTC
    channel    TEXT NOT NULL,
    country    TEXT NOT NULL,
    holder     TEXT NOT NULL DEFAULT '',
    messages   BIGINT NOT NULL,
    segments   BIGINT NOT NULL,
    credits    BIGINT NOT NULL, -- micro-credits charged, refunds deducted
    -- the messages by their current status
    sending    BIGINT NOT NULL DEFAULT 0,
    sent       BIGINT NOT NULL DEFAULT 0,
    delivered  BIGINT NOT NULL DEFAULT 0,
    read       BIGINT NOT NULL DEFAULT 0,
    failed     BIGINT NOT NULL DEFAULT 0,
    canceled   BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, env, day, channel, country, holder)
);
-- Operators' view across accounts: one range of days.
CREATE INDEX usage_days_day ON usage_days (day);

INSERT INTO usage_days (account_id, env, day, channel, country, holder, messages, segments, credits,
    sending, sent, delivered, read, failed, canceled)
SELECT account_id, env, created_at / 86400000, channel, country_code, '', COUNT(*), SUM(segments), SUM(charged),
    SUM(CASE WHEN status = 'SENDING' THEN 1 ELSE 0 END), SUM(CASE WHEN status = 'SENT' THEN 1 ELSE 0 END),
    SUM(CASE WHEN status = 'DELIVERED' THEN 1 ELSE 0 END), SUM(CASE WHEN status = 'READ' THEN 1 ELSE 0 END),
    SUM(CASE WHEN status = 'FAILED' THEN 1 ELSE 0 END), SUM(CASE WHEN status = 'CANCELED' THEN 1 ELSE 0 END)
FROM messages GROUP BY account_id, env, created_at / 86400000, channel, country_code;

-- +goose Down
DROP TABLE usage_days;
