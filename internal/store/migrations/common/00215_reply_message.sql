-- +goose Up
-- The message a reply answers (the account's latest message to that phone
-- within the reply window, as matched when it came in; '' when none), so
-- that the message's page shows its replies.
ALTER TABLE inbound_messages ADD COLUMN message_id TEXT NOT NULL DEFAULT '';
CREATE INDEX inbound_message_id ON inbound_messages (message_id) WHERE message_id <> '';

-- +goose Down
DROP INDEX inbound_message_id;
ALTER TABLE inbound_messages DROP COLUMN message_id;
