-- +goose Up
-- An account's compliance settings (CONTRACT section 7), read with the API
-- key on every request like its other settings:
--   quiet_hours     "21:00-08:00" in the recipient's local time, '' for none
--   retention_days  message text and phone numbers older than this are
--                   erased and hashed; 0 keeps them
--   opt_out_reply,  the confirmation sent back to a recipient who answered
--   opt_in_reply    a stop or start word; '' sends none
ALTER TABLE accounts ADD COLUMN quiet_hours TEXT NOT NULL DEFAULT '';
ALTER TABLE accounts ADD COLUMN retention_days INTEGER NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN opt_out_reply TEXT NOT NULL DEFAULT '';
ALTER TABLE accounts ADD COLUMN opt_in_reply TEXT NOT NULL DEFAULT '';

-- The retention sweep walks an account's replies in id (time) order.
CREATE INDEX inbound_account_id ON inbound_messages (account_id, id);

-- +goose Down
DROP INDEX inbound_account_id;
ALTER TABLE accounts DROP COLUMN opt_in_reply;
ALTER TABLE accounts DROP COLUMN opt_out_reply;
ALTER TABLE accounts DROP COLUMN retention_days;
ALTER TABLE accounts DROP COLUMN quiet_hours;
