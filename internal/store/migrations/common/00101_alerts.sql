-- +goose Up
-- The account's own webhook and its alert thresholds (micro-credits; NULL
-- is off). On the account row, which is read with the key on every
-- request, so a send knows its thresholds without a query; changing them
-- moves auth_version like any setting.
ALTER TABLE accounts ADD COLUMN webhook_url TEXT NOT NULL DEFAULT '';
ALTER TABLE accounts ADD COLUMN alert_low_balance BIGINT;
ALTER TABLE accounts ADD COLUMN alert_daily_spend BIGINT;

-- An alert that was posted, one row per crossing: written in the debit's
-- transaction with the event itself, and only if absent, so two nodes
-- never both post one. balance.low has period '' and its row is deleted
-- when the balance is back at or above the threshold; spend.daily has
-- the UTC day.
CREATE TABLE alert_marks (
    account_id TEXT NOT NULL,
    event      TEXT NOT NULL,
    period     TEXT NOT NULL,
    event_id   TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (account_id, event, period)
);
-- The account's own events, for the panel's list of them (the account's
-- other events are far more numerous).
CREATE INDEX webhook_events_alerts ON webhook_events (account_id) WHERE event IN ('balance.low', 'spend.daily');
-- Webhooks that need attention (given up, refused for good, or failing
-- and retried), for the panel's overview: few, whatever the traffic.
CREATE INDEX webhook_events_trouble ON webhook_events (account_id)
    WHERE state IN ('failed', 'gone') OR (state = 'pending' AND attempts > 0);

-- +goose Down
DROP INDEX webhook_events_trouble;
DROP INDEX webhook_events_alerts;
DROP TABLE alert_marks;
ALTER TABLE accounts DROP COLUMN alert_daily_spend;
ALTER TABLE accounts DROP COLUMN alert_low_balance;
ALTER TABLE accounts DROP COLUMN webhook_url;
