-- +goose Up
-- A one-recipient send writes no campaigns row: its campaign is named
-- after its message and read from it. messages.campaign_id therefore no
-- longer always names a row.
ALTER TABLE messages DROP CONSTRAINT IF EXISTS messages_campaign_id_fkey;

-- +goose Down
-- Not restored: the messages of one-recipient sends written since name
-- campaigns that have no row.
SELECT 1;
