-- +goose Up
-- Times are Unix milliseconds (UTC) in BIGINT columns on both dialects: one
-- representation, exact millisecond timestamps in the API, cheap comparisons.
-- Money is integer micro-credits: 1 credit = 1000000.

CREATE TABLE accounts (
    id                  TEXT PRIMARY KEY,
    name                TEXT NOT NULL,
    tier                TEXT NOT NULL,
    currency            TEXT NOT NULL,
    country_code        TEXT NOT NULL,
    balance             BIGINT NOT NULL DEFAULT 0 CHECK (balance >= 0),
    balance_updated_at  BIGINT NOT NULL,
    webhook_secret      TEXT NOT NULL,
    webhook_secret_prev TEXT NOT NULL DEFAULT '',
    secret_rotated_at   BIGINT NOT NULL DEFAULT 0,
    tier_rpm            INTEGER NOT NULL,
    send_rpm            INTEGER NOT NULL,
    status_rpm          INTEGER NOT NULL,
    media_rpm           INTEGER NOT NULL,
    wa_quality_tier     INTEGER NOT NULL DEFAULT 1,
    rcs_fallback        INTEGER NOT NULL DEFAULT 0,
    ip_allowlist        TEXT NOT NULL DEFAULT '',
    prices              TEXT NOT NULL DEFAULT '',
    created_at          BIGINT NOT NULL
);

CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts(id),
    env          TEXT NOT NULL CHECK (env IN ('test', 'live')),
    prefix       TEXT NOT NULL,
    hash         TEXT NOT NULL UNIQUE,
    name         TEXT NOT NULL DEFAULT '',
    created_at   BIGINT NOT NULL,
    last_used_at BIGINT,
    revoked_at   BIGINT
);
CREATE INDEX api_keys_account ON api_keys (account_id);

CREATE TABLE campaigns (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts(id),
    key_id       TEXT NOT NULL,
    env          TEXT NOT NULL,
    type         TEXT NOT NULL,
    callback_url TEXT NOT NULL DEFAULT '',
    total        INTEGER NOT NULL,
    created_at   BIGINT NOT NULL
);
CREATE INDEX campaigns_account ON campaigns (account_id, id);

-- The message rows are the dispatch queue: next_attempt_at is set while a
-- message waits to be handed to a provider, and a claim pushes it to the end
-- of the lease, so a crashed worker's messages become due again by themselves.
CREATE TABLE messages (
    id              TEXT PRIMARY KEY,
    campaign_id     TEXT NOT NULL REFERENCES campaigns(id),
    account_id      TEXT NOT NULL,
    env             TEXT NOT NULL,
    to_phone        TEXT NOT NULL,
    country_code    TEXT NOT NULL,
    type            TEXT NOT NULL,
    channel         TEXT NOT NULL,
    body            TEXT NOT NULL,
    content         TEXT NOT NULL DEFAULT '',
    status          TEXT NOT NULL,
    segments        INTEGER NOT NULL,
    encoding        TEXT NOT NULL,
    credits         BIGINT NOT NULL,
    charged         BIGINT NOT NULL,
    provider        TEXT NOT NULL DEFAULT '',
    provider_ref    TEXT NOT NULL DEFAULT '',
    error_code      TEXT NOT NULL DEFAULT '',
    error_message   TEXT NOT NULL DEFAULT '',
    reference       TEXT NOT NULL DEFAULT '',
    callback_url    TEXT NOT NULL DEFAULT '',
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL,
    sent_at         BIGINT,
    delivered_at    BIGINT,
    read_at         BIGINT,
    failed_at       BIGINT,
    canceled_at     BIGINT,
    scheduled_at    BIGINT,
    expires_at      BIGINT NOT NULL,
    next_attempt_at BIGINT,
    lease_owner     TEXT NOT NULL DEFAULT '',
    attempts        INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX messages_due ON messages (next_attempt_at) WHERE next_attempt_at IS NOT NULL;
CREATE INDEX messages_campaign ON messages (campaign_id, id);
CREATE INDEX messages_phone ON messages (account_id, to_phone, id);
-- Messages a provider may still report on (the simulator's recovery scan).
CREATE INDEX messages_sent_open ON messages (provider, updated_at)
    WHERE status = 'SENT' OR (status = 'DELIVERED' AND channel <> 'SMS');
CREATE INDEX messages_provider_ref ON messages (provider, provider_ref) WHERE provider_ref <> '';
CREATE INDEX messages_open ON messages (expires_at) WHERE status IN ('SENDING', 'SENT');
CREATE INDEX messages_account ON messages (account_id, id);

CREATE TABLE ledger (
    id            TEXT PRIMARY KEY,
    account_id    TEXT NOT NULL REFERENCES accounts(id),
    amount        BIGINT NOT NULL,
    balance_after BIGINT NOT NULL,
    kind          TEXT NOT NULL,
    message_id    TEXT NOT NULL DEFAULT '',
    campaign_id   TEXT NOT NULL DEFAULT '',
    note          TEXT NOT NULL DEFAULT '',
    created_at    BIGINT NOT NULL
);
CREATE INDEX ledger_account ON ledger (account_id, id);
CREATE INDEX ledger_message ON ledger (message_id) WHERE message_id <> '';

-- Webhook events are written in the same transaction as the status change
-- they report, and are their own delivery queue (same lease scheme).
CREATE TABLE webhook_events (
    id              TEXT PRIMARY KEY,
    account_id      TEXT NOT NULL,
    campaign_id     TEXT NOT NULL DEFAULT '',
    message_id      TEXT NOT NULL DEFAULT '',
    event           TEXT NOT NULL,
    url             TEXT NOT NULL,
    body            TEXT NOT NULL,
    state           TEXT NOT NULL DEFAULT 'pending',
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at BIGINT,
    lease_owner     TEXT NOT NULL DEFAULT '',
    last_status     INTEGER NOT NULL DEFAULT 0,
    last_error      TEXT NOT NULL DEFAULT '',
    created_at      BIGINT NOT NULL,
    delivered_at    BIGINT
);
CREATE INDEX webhook_events_due ON webhook_events (next_attempt_at) WHERE next_attempt_at IS NOT NULL;
CREATE INDEX webhook_events_message ON webhook_events (message_id, id);
CREATE INDEX webhook_events_account ON webhook_events (account_id, id);

CREATE TABLE webhook_attempts (
    id           TEXT PRIMARY KEY,
    event_id     TEXT NOT NULL,
    attempted_at BIGINT NOT NULL,
    status_code  INTEGER NOT NULL,
    duration_ms  INTEGER NOT NULL,
    error        TEXT NOT NULL DEFAULT '',
    response     TEXT NOT NULL DEFAULT ''
);
CREATE INDEX webhook_attempts_event ON webhook_attempts (event_id, id);

CREATE TABLE idempotency_keys (
    key_id       TEXT NOT NULL,
    idem_key     TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    status_code  INTEGER NOT NULL,
    response     TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (key_id, idem_key)
);
CREATE INDEX idempotency_created ON idempotency_keys (created_at);

CREATE TABLE inbound_messages (
    id          TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL,
    env         TEXT NOT NULL,
    phone       TEXT NOT NULL,
    channel     TEXT NOT NULL,
    body        TEXT NOT NULL,
    campaign_id TEXT NOT NULL DEFAULT '',
    provider    TEXT NOT NULL DEFAULT '',
    received_at BIGINT NOT NULL
);
CREATE INDEX inbound_account_phone ON inbound_messages (account_id, env, phone, received_at);

CREATE TABLE users (
    id            TEXT PRIMARY KEY,
    account_id    TEXT NOT NULL REFERENCES accounts(id),
    email         TEXT NOT NULL UNIQUE,
    role          TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'developer', 'viewer')),
    password_hash TEXT NOT NULL,
    created_at    BIGINT NOT NULL
);

CREATE TABLE sessions (
    token_hash   TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users(id),
    created_at   BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL
);

-- +goose Down
DROP TABLE sessions;
DROP TABLE users;
DROP TABLE inbound_messages;
DROP TABLE idempotency_keys;
DROP TABLE webhook_attempts;
DROP TABLE webhook_events;
DROP TABLE ledger;
DROP TABLE messages;
DROP TABLE campaigns;
DROP TABLE api_keys;
DROP TABLE accounts;
