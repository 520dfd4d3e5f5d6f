-- +goose Up
-- The SMPP binds open on every node, so that an SMPP user's maxBinds
-- counts them all. A node renews its rows while the binds live; the rows
-- of a node that died expire.
CREATE TABLE smpp_binds (
    id         TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL,
    node       TEXT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX smpp_binds_user ON smpp_binds (user_id, expires_at);
CREATE INDEX smpp_binds_node ON smpp_binds (node);

-- +goose Down
DROP TABLE smpp_binds;
