-- +goose Up
-- Removing a Twilio credential moves the counter that nodes read before
-- each request, so a removed AC… or SK… stops working on every node at its
-- next request, as a deleted API key does. (A new one needs nothing: only
-- credentials found are kept.)
-- +goose StatementBegin
CREATE TRIGGER twilio_credentials_auth_delete AFTER DELETE ON twilio_credentials
BEGIN
    UPDATE auth_version SET version = version + 1 WHERE id = 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER twilio_credentials_auth_update AFTER UPDATE ON twilio_credentials
BEGIN
    UPDATE auth_version SET version = version + 1 WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER twilio_credentials_auth_update;
DROP TRIGGER twilio_credentials_auth_delete;
