-- +goose Up
-- Shares of an account's balance held by the writers of PostgreSQL nodes.
-- Every send debits its account, and with a single balance row every
-- transaction that sends waits for the one before it to commit, on every
-- node: the row is the deployment's one hot lock. A writer instead debits
-- its own share and refills it from the account row now and then (a part
-- of what the row holds), and when the row runs dry the shares are
-- gathered back, so a send is refused only when the account as a whole is
-- short. The balance is the row's plus every share; the ledger explains
-- the sum. SQLite has one writer and never writes shares.
CREATE TABLE balance_holds (
    account_id TEXT NOT NULL REFERENCES accounts(id),
    holder     TEXT NOT NULL,
    amount     BIGINT NOT NULL CHECK (amount >= 0),
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (account_id, holder)
);

-- +goose Down
DROP TABLE balance_holds;
