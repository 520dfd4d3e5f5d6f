-- +goose Up
-- Removing a Twilio credential moves the counter that nodes read before
-- each request, so a removed AC… or SK… stops working on every node at its
-- next request, as a deleted API key does. (A new one needs nothing: only
-- credentials found are kept.)
CREATE TRIGGER twilio_credentials_auth_delete AFTER DELETE ON twilio_credentials FOR EACH ROW EXECUTE FUNCTION bump_auth_version();
CREATE TRIGGER twilio_credentials_auth_update AFTER UPDATE ON twilio_credentials FOR EACH ROW EXECUTE FUNCTION bump_auth_version();

-- +goose Down
DROP TRIGGER twilio_credentials_auth_update ON twilio_credentials;
DROP TRIGGER twilio_credentials_auth_delete ON twilio_credentials;
