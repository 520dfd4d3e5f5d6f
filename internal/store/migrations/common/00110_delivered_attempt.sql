-- +goose Up
-- The attempt that delivers a webhook event is kept in the event's own row,
-- which its outcome updates anyway, instead of in a row of webhook_attempts:
-- two row writes (and their index entries) fewer per message. Attempts that
-- fail keep their rows. delivered_attempt_id is what tells a delivery that
-- reached its event (by the lease owner) from one that did not (a node whose
-- lease was taken over meanwhile); the latter still gets an attempt row.
ALTER TABLE webhook_events ADD COLUMN delivered_attempt_id TEXT NOT NULL DEFAULT '';
ALTER TABLE webhook_events ADD COLUMN delivered_duration_ms BIGINT NOT NULL DEFAULT 0;
ALTER TABLE webhook_events ADD COLUMN delivered_response TEXT NOT NULL DEFAULT '';

-- +goose Down
INSERT INTO webhook_attempts (id, event_id, attempted_at, status_code, duration_ms, error, response)
    SELECT delivered_attempt_id, id, delivered_at, last_status, delivered_duration_ms, '', delivered_response
    FROM webhook_events WHERE delivered_attempt_id <> '';
ALTER TABLE webhook_events DROP COLUMN delivered_response;
ALTER TABLE webhook_events DROP COLUMN delivered_duration_ms;
ALTER TABLE webhook_events DROP COLUMN delivered_attempt_id;
