-- +goose Up
-- A transfer between a reseller and its child writes a line on each side;
-- counterparty names the other account, so that each ledger explains the
-- move on its own ('' for every other line).
ALTER TABLE ledger ADD COLUMN counterparty TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE ledger DROP COLUMN counterparty;
