-- +goose Up
-- The events feed and the message list read one account's environment in
-- write order. SQLite appends the rowid to every index and its writer is
-- single, so an index on (account_id, env) reads in rowid order and the
-- rowid is the feed's position: a row committed later always has a higher
-- one. (The PostgreSQL migration of the same number explains why it needs
-- more.)
CREATE INDEX webhook_events_feed ON webhook_events (account_id, env);
CREATE INDEX messages_account_env ON messages (account_id, env);

-- +goose Down
DROP INDEX messages_account_env;
DROP INDEX webhook_events_feed;
