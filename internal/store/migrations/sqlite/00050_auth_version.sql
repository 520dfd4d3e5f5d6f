-- +goose Up
-- A counter that moves whenever anything an API-key lookup returns may have
-- changed: a key revoked or deleted, an account's settings (IP
-- allow-list, limits, senders, prices, webhook secret, ...). Nodes keep the
-- keys they authenticated in memory and read only this counter per request,
-- so a change bites on the very next request on every node. Triggers keep
-- it, so every writer (a node, the CLI, a migration) moves it without
-- knowing about it. (A new key needs nothing: only keys found are kept.) Updates that move only the balance (every send) or only
-- a key's last use leave it alone: the cache never answers with either.
CREATE TABLE auth_version (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    version BIGINT NOT NULL
);
INSERT INTO auth_version (id, version) VALUES (1, 1);

-- +goose StatementBegin
CREATE TRIGGER accounts_auth_update AFTER UPDATE ON accounts
WHEN OLD.balance IS NEW.balance AND OLD.balance_updated_at IS NEW.balance_updated_at
BEGIN
    UPDATE auth_version SET version = version + 1 WHERE id = 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER accounts_auth_delete AFTER DELETE ON accounts
BEGIN
    UPDATE auth_version SET version = version + 1 WHERE id = 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER api_keys_auth_update AFTER UPDATE ON api_keys
WHEN OLD.last_used_at IS NEW.last_used_at
BEGIN
    UPDATE auth_version SET version = version + 1 WHERE id = 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER api_keys_auth_delete AFTER DELETE ON api_keys
BEGIN
    UPDATE auth_version SET version = version + 1 WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER api_keys_auth_delete;
DROP TRIGGER api_keys_auth_update;
DROP TRIGGER accounts_auth_delete;
DROP TRIGGER accounts_auth_update;
DROP TABLE auth_version;
