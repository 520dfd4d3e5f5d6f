-- +goose Up
-- SMPP users: logins of an account's ESMEs to the SMPP server. system_id
-- is unique across accounts because a bind names nothing else.
CREATE TABLE smpp_users (
    id            TEXT PRIMARY KEY,
    account_id    TEXT NOT NULL REFERENCES accounts(id),
    env           TEXT NOT NULL CHECK (env IN ('test', 'live')),
    system_id     TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    max_binds     INTEGER NOT NULL,
    created_at    BIGINT NOT NULL
);
CREATE INDEX smpp_users_account ON smpp_users (account_id, id);

-- deliver_sm PDUs (receipts, replies) waiting for a receiving bind of
-- their SMPP user: a leased queue. A row is deleted when a bind
-- acknowledges it, or when it expires unacknowledged.
CREATE TABLE smpp_items (
    id              TEXT PRIMARY KEY,
    user_id         TEXT NOT NULL,
    account_id      TEXT NOT NULL,
    env             TEXT NOT NULL,
    message_id      TEXT NOT NULL,
    source          TEXT NOT NULL,
    dest            TEXT NOT NULL,
    esm_class       INTEGER NOT NULL,
    text            TEXT NOT NULL,
    state           INTEGER NOT NULL,
    created_at      BIGINT NOT NULL,
    expires_at      BIGINT NOT NULL,
    next_attempt_at BIGINT NOT NULL,
    lease_owner     TEXT NOT NULL DEFAULT ''
);
CREATE INDEX smpp_items_due ON smpp_items (user_id, next_attempt_at);
CREATE INDEX smpp_items_expiry ON smpp_items (expires_at);

-- +goose Down
DROP TABLE smpp_items;
DROP TABLE smpp_users;
