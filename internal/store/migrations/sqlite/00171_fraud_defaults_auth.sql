-- +goose Up
-- The default fraud rules are read with every account, which nodes keep
-- with its keys: changing them moves the auth counter, as an account's
-- own settings do.
-- +goose StatementBegin
CREATE TRIGGER fraud_defaults_auth_update AFTER UPDATE ON fraud_defaults
BEGIN
    UPDATE auth_version SET version = version + 1 WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER fraud_defaults_auth_update;
