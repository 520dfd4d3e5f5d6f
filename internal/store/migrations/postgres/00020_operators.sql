-- +goose Up
-- Operators are users of no account (CONTRACT section 5): account_id
-- becomes nullable and the role 'operator' is allowed, only without an
-- account.
ALTER TABLE users ALTER COLUMN account_id DROP NOT NULL;
ALTER TABLE users DROP CONSTRAINT users_role_check;
ALTER TABLE users ADD CONSTRAINT users_role_check
    CHECK (role IN ('owner', 'admin', 'developer', 'viewer', 'operator'));
ALTER TABLE users ADD CONSTRAINT users_operator_no_account CHECK ((role = 'operator') = (account_id IS NULL));
CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX users_account ON users (account_id);

-- +goose Down
DELETE FROM sessions WHERE user_id IN (SELECT id FROM users WHERE role = 'operator');
DELETE FROM users WHERE role = 'operator';
DROP INDEX users_account;
DROP INDEX sessions_user;
ALTER TABLE users DROP CONSTRAINT users_operator_no_account;
ALTER TABLE users DROP CONSTRAINT users_role_check;
ALTER TABLE users ADD CONSTRAINT users_role_check CHECK (role IN ('owner', 'admin', 'developer', 'viewer'));
ALTER TABLE users ALTER COLUMN account_id SET NOT NULL;
