-- +goose Up
-- Every webhook event paid an entry in webhook_events_created, twice per
-- message; it served only the deletion of old events, which now finds them
-- by id (an event's id starts with its creation time).
DROP INDEX webhook_events_created;

-- +goose Down
CREATE INDEX webhook_events_created ON webhook_events (created_at);
