-- +goose Up
-- The panel's overview lists an account's latest failures: only failed
-- messages are in this index (a status change to FAILED is not a HOT
-- update anyway), so the list reads a few entries whatever the account's
-- volume, instead of walking its messages back until enough failed.
CREATE INDEX messages_failed ON messages (account_id, failed_at) WHERE status = 'FAILED';

-- +goose Down
DROP INDEX messages_failed;
