-- +goose Up
-- The default fraud rules are read with every account, which nodes keep
-- with its keys: changing them moves the auth counter, as an account's
-- own settings do.
CREATE TRIGGER fraud_defaults_auth_update AFTER UPDATE ON fraud_defaults FOR EACH ROW EXECUTE FUNCTION bump_auth_version();

-- +goose Down
DROP TRIGGER fraud_defaults_auth_update ON fraud_defaults;
