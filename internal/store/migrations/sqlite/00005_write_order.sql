-- +goose Up
-- Nothing to add: on SQLite the rowid orders rows as they were written
-- (see the PostgreSQL migration of the same number, which adds seq).
SELECT 1;

-- +goose Down
SELECT 1;
