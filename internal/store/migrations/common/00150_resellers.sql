-- +goose Up
-- Accounts form a tree: parent_id names the reseller an account was made
-- under ('' at the top). A suspension is written on every account of the
-- suspended subtree (suspended_by names the account whose suspension it
-- is), so that a send, a bind or a dispatch reads it from its own row.
ALTER TABLE accounts ADD COLUMN parent_id TEXT NOT NULL DEFAULT '';
ALTER TABLE accounts ADD COLUMN reseller INTEGER NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN billing TEXT NOT NULL DEFAULT '';
ALTER TABLE accounts ADD COLUMN suspended_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN suspended_by TEXT NOT NULL DEFAULT '';
CREATE INDEX accounts_parent ON accounts (parent_id) WHERE parent_id <> '';

-- +goose Down
DROP INDEX accounts_parent;
ALTER TABLE accounts DROP COLUMN suspended_by;
ALTER TABLE accounts DROP COLUMN suspended_at;
ALTER TABLE accounts DROP COLUMN billing;
ALTER TABLE accounts DROP COLUMN reseller;
ALTER TABLE accounts DROP COLUMN parent_id;
