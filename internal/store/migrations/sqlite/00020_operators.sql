-- +goose Up
-- Operators are users of no account (CONTRACT section 5): account_id
-- becomes nullable and the role 'operator' is allowed, only without an
-- account. SQLite cannot change a column's constraints in place, so users
-- is rebuilt, and sessions with it (its foreign key names the table).
CREATE TABLE users_new (
    id            TEXT PRIMARY KEY,
    account_id    TEXT REFERENCES accounts(id),
    email         TEXT NOT NULL UNIQUE,
    role          TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'developer', 'viewer', 'operator')),
    password_hash TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    CHECK ((role = 'operator') = (account_id IS NULL))
);
INSERT INTO users_new (id, account_id, email, role, password_hash, created_at)
    SELECT id, account_id, email, role, password_hash, created_at FROM users;
CREATE TABLE sessions_new (
    token_hash   TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users_new(id),
    created_at   BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL
);
INSERT INTO sessions_new SELECT token_hash, user_id, created_at, last_seen_at, expires_at FROM sessions;
DROP TABLE sessions;
DROP TABLE users;
ALTER TABLE users_new RENAME TO users;
ALTER TABLE sessions_new RENAME TO sessions;
CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX users_account ON users (account_id);

-- +goose Down
DELETE FROM sessions WHERE user_id IN (SELECT id FROM users WHERE role = 'operator');
DELETE FROM users WHERE role = 'operator';
DROP INDEX users_account;
DROP INDEX sessions_user;
