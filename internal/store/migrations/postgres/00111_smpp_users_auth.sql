-- +goose Up
-- Removing an SMPP user moves the counter that nodes read before each
-- request: a bind of the user on any node is closed at its next submit_sm,
-- as a revoked API key bites at its next request.
CREATE TRIGGER smpp_users_auth_delete AFTER DELETE ON smpp_users FOR EACH ROW EXECUTE FUNCTION bump_auth_version();

-- +goose Down
DROP TRIGGER smpp_users_auth_delete ON smpp_users;
