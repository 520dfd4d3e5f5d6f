-- +goose Up
-- The events feed (GET /api/v1/integration/events) lists every event of an
-- account's environment, also of sends without a callbackUrl: those events
-- are written in state 'none' with no delivery due, and exist only for the
-- feed. The environment is the key's world (test or live); events written
-- before this version take their campaign's.
ALTER TABLE webhook_events ADD COLUMN env TEXT NOT NULL DEFAULT '';
UPDATE webhook_events SET env = COALESCE((SELECT c.env FROM campaigns c WHERE c.id = webhook_events.campaign_id), '');
-- The sweeper deletes events after 30 days, oldest first.
CREATE INDEX webhook_events_created ON webhook_events (created_at);

-- +goose Down
DROP INDEX webhook_events_created;
ALTER TABLE webhook_events DROP COLUMN env;
