-- +goose Up
-- What operators see of an SMPP user: its open binds (from where, since
-- when, which kind), when it last bound, and its recent refusals.
ALTER TABLE smpp_binds ADD COLUMN addr TEXT NOT NULL DEFAULT '';
ALTER TABLE smpp_binds ADD COLUMN bind_type TEXT NOT NULL DEFAULT '';
ALTER TABLE smpp_binds ADD COLUMN bound_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE smpp_users ADD COLUMN last_bound_at BIGINT NOT NULL DEFAULT 0;

-- The last refused binds and submits of each SMPP user (a bounded number
-- per user, older ones deleted as new ones come), shared by every node.
-- Refusals of a system_id no user has are only logged: they belong to no
-- account.
CREATE TABLE smpp_refusals (
    id         TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL,
    account_id TEXT NOT NULL,
    at         BIGINT NOT NULL,
    addr       TEXT NOT NULL,
    command    TEXT NOT NULL,
    status     TEXT NOT NULL,
    reason     TEXT NOT NULL
);
CREATE INDEX smpp_refusals_user ON smpp_refusals (user_id, at);

-- +goose Down
DROP TABLE smpp_refusals;
ALTER TABLE smpp_users DROP COLUMN last_bound_at;
ALTER TABLE smpp_binds DROP COLUMN bound_at;
ALTER TABLE smpp_binds DROP COLUMN bind_type;
ALTER TABLE smpp_binds DROP COLUMN addr;
