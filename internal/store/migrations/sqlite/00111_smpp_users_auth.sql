-- +goose Up
-- Removing an SMPP user moves the counter that nodes read before each
-- request: a bind of the user on any node is closed at its next submit_sm,
-- as a revoked API key bites at its next request.
-- +goose StatementBegin
CREATE TRIGGER smpp_users_auth_delete AFTER DELETE ON smpp_users
BEGIN
    UPDATE auth_version SET version = version + 1 WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER smpp_users_auth_delete;
