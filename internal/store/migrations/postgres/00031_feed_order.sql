-- +goose Up
-- The events feed promises that passing back its cursor returns every
-- newer event. seq (a BIGSERIAL) is taken at insert time, and several
-- transactions commit in parallel, so a row with a lower seq can become
-- visible after a reader has moved past a higher one. The feed therefore
-- gives each event its position when it is first read instead: a reader
-- takes the account's feed_heads row lock, numbers every committed event
-- without a position (in seq order) after the head, and moves the head.
-- A transaction that commits later can only get higher positions.
ALTER TABLE webhook_events ADD COLUMN feed_seq BIGINT;
CREATE TABLE feed_heads (
    account_id TEXT NOT NULL,
    env        TEXT NOT NULL,
    pos        BIGINT NOT NULL,
    PRIMARY KEY (account_id, env)
);
-- Serves the feed (feed_seq > cursor) and finds the events still without
-- a position (feed_seq IS NULL).
CREATE INDEX webhook_events_feed ON webhook_events (account_id, env, feed_seq);
CREATE INDEX messages_account_env_seq ON messages (account_id, env, seq);

-- +goose Down
DROP INDEX messages_account_env_seq;
DROP INDEX webhook_events_feed;
DROP TABLE feed_heads;
ALTER TABLE webhook_events DROP COLUMN feed_seq;
