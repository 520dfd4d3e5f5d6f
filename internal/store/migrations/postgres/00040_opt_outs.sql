-- +goose Up
-- Recipients who answered a stop word (or whom an operator added): the
-- account sends nothing more to them in that environment until they answer
-- a start word. A send checks its recipients here inside its own
-- transaction. seq is the write order, for cursor paging. The SQLite
-- migration of the same number is the same table with AUTOINCREMENT.
CREATE TABLE opt_outs (
    seq        BIGSERIAL PRIMARY KEY,
    account_id TEXT NOT NULL,
    env        TEXT NOT NULL,
    phone      TEXT NOT NULL,
    channel    TEXT NOT NULL DEFAULT '',
    source     TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    UNIQUE (account_id, env, phone)
);
CREATE INDEX opt_outs_account_seq ON opt_outs (account_id, env, seq);

-- +goose Down
DROP TABLE opt_outs;
