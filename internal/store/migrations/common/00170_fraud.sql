-- +goose Up
-- The fraud guard (docs/fraud.md). An account's own settings (JSON: the
-- operator's countries for it, the admin's narrowing, its own rules; ''
-- for none) live on its row, which is read with the key, so a send knows
-- its rules without a query and a change moves auth_version.
ALTER TABLE accounts ADD COLUMN fraud TEXT NOT NULL DEFAULT '';
-- The decision on a message (JSON; '' for none) and when it was held.
ALTER TABLE messages ADD COLUMN fraud TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN held_at BIGINT;
-- Held messages wait for an operator: few, whatever the traffic.
CREATE INDEX messages_held ON messages (created_at, id) WHERE status = 'HELD';

-- The operator's default rules (JSON), one row. Read with every account.
CREATE TABLE fraud_defaults (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    rules TEXT NOT NULL
);
INSERT INTO fraud_defaults (id, rules) VALUES (1, '');

-- Counts of an account's messages per environment, scope (recipient,
-- range, country), key and UTC hour (Unix hours), written in the
-- transaction that accepts them when no shared Redis is configured.
-- Hours older than the baseline's window are swept.
CREATE TABLE fraud_counts (
    account_id TEXT NOT NULL,
    env        TEXT NOT NULL,
    scope      TEXT NOT NULL,
    fkey       TEXT NOT NULL,
    hour       BIGINT NOT NULL,
    n          BIGINT NOT NULL,
    PRIMARY KEY (account_id, env, scope, fkey, hour)
);
CREATE INDEX fraud_counts_hour ON fraud_counts (hour);

-- Each hour's decisions of a rule on a key (a range, or a country) of an
-- account: the operator page's chart, and the mark that lets the
-- account's fraud.suspected alert go out once per rule and key an hour
-- (the row's insert is the alert's).
CREATE TABLE fraud_hours (
    hour       BIGINT NOT NULL,
    account_id TEXT NOT NULL,
    rule       TEXT NOT NULL,
    fkey       TEXT NOT NULL,
    scope      TEXT NOT NULL,
    action     TEXT NOT NULL,
    messages   BIGINT NOT NULL,
    PRIMARY KEY (hour, account_id, rule, fkey)
);

-- The account's own events now include fraud.suspected: its list of them
-- stays on a narrow index.
DROP INDEX webhook_events_alerts;
CREATE INDEX webhook_events_alerts ON webhook_events (account_id)
    WHERE event IN ('balance.low', 'spend.daily', 'fraud.suspected');

-- +goose Down
DROP INDEX webhook_events_alerts;
CREATE INDEX webhook_events_alerts ON webhook_events (account_id) WHERE event IN ('balance.low', 'spend.daily');
DROP TABLE fraud_hours;
DROP TABLE fraud_counts;
DROP TABLE fraud_defaults;
DROP INDEX messages_held;
ALTER TABLE messages DROP COLUMN held_at;
ALTER TABLE messages DROP COLUMN fraud;
ALTER TABLE accounts DROP COLUMN fraud;
