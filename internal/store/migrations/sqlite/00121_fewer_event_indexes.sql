-- +goose Up
-- Every webhook event paid an entry in each of these, twice per message:
-- - webhook_events_created served only the deletion of old events, which
--   now finds them by id (an event's id starts with its creation time);
-- - webhook_events_account (account_id) is the prefix of
--   webhook_events_feed (account_id, env), which serves the same lookups.
DROP INDEX webhook_events_created;
DROP INDEX webhook_events_account;

-- +goose Down
CREATE INDEX webhook_events_account ON webhook_events (account_id);
CREATE INDEX webhook_events_created ON webhook_events (created_at);
