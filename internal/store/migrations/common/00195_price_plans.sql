-- +goose Up
-- Price plans: named price tables that many top-level accounts share. An
-- account names its plan (price_plan_id, '' for none) and carries a copy
-- of the plan's table (plan_prices), written in the same transaction as
-- every change of the plan or of the account's choice of plan: reading an
-- account then reads what it pays, and since the copy is an update of the
-- account's row, the auth counter's trigger moves and every node's cached
-- accounts are read again on their next request. At most one plan is the
-- default, the one new top-level accounts start on.
CREATE TABLE price_plans (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    prices     TEXT NOT NULL DEFAULT '',
    is_default INTEGER NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX price_plans_name ON price_plans (name);
CREATE UNIQUE INDEX price_plans_default ON price_plans (is_default) WHERE is_default = 1;
ALTER TABLE accounts ADD COLUMN price_plan_id TEXT NOT NULL DEFAULT '';
ALTER TABLE accounts ADD COLUMN plan_prices TEXT NOT NULL DEFAULT '';
CREATE INDEX accounts_price_plan ON accounts (price_plan_id) WHERE price_plan_id <> '';

-- +goose Down
DROP INDEX accounts_price_plan;
ALTER TABLE accounts DROP COLUMN plan_prices;
ALTER TABLE accounts DROP COLUMN price_plan_id;
DROP INDEX price_plans_default;
DROP INDEX price_plans_name;
DROP TABLE price_plans;
