-- +goose Up
-- WhatsApp and RCS state (times in Unix milliseconds, as everywhere).

-- Whether a device can receive RCS, as the provider last answered. Kept per
-- environment: the simulator's answers for test traffic must never decide
-- how a live message to the same number is sent.
CREATE TABLE rcs_capabilities (
    env        TEXT NOT NULL,
    phone      TEXT NOT NULL,
    capable    INTEGER NOT NULL,
    checked_at BIGINT NOT NULL,
    PRIMARY KEY (env, phone)
);

-- The last WhatsApp conversation a template opened with a number. Another
-- template within 24 hours of opened_at rides on it and is not a new
-- conversation (neither charged as one nor counted against the daily limit).
CREATE TABLE wa_conversations (
    account_id TEXT NOT NULL,
    env        TEXT NOT NULL,
    phone      TEXT NOT NULL,
    opened_at  BIGINT NOT NULL,
    PRIMARY KEY (account_id, env, phone)
);

-- New template-initiated conversations per account, environment and UTC day
-- (YYYY-MM-DD): one row updated in place, so the daily-limit check is a
-- single conditional upsert in the send's transaction.
CREATE TABLE wa_conversation_days (
    account_id TEXT NOT NULL,
    env        TEXT NOT NULL,
    day        TEXT NOT NULL,
    opened     INTEGER NOT NULL,
    PRIMARY KEY (account_id, env, day)
);

-- +goose Down
DROP TABLE wa_conversation_days;
DROP TABLE wa_conversations;
DROP TABLE rcs_capabilities;
