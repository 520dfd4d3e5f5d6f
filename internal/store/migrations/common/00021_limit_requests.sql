-- +goose Up
-- Requests for higher limits, made in the panel and decided by operators.
-- What was granted is kept on the request (tier and the four windows), so
-- the account's history explains its limits.
CREATE TABLE limit_requests (
    id             TEXT PRIMARY KEY,
    account_id     TEXT NOT NULL REFERENCES accounts(id),
    requested_by   TEXT NOT NULL,
    status         TEXT NOT NULL CHECK (status IN ('PENDING', 'APPROVED', 'REJECTED')),
    monthly_volume BIGINT NOT NULL,
    use_case       TEXT NOT NULL,
    justification  TEXT NOT NULL,
    tier           TEXT NOT NULL DEFAULT '',
    tier_rpm       INTEGER NOT NULL DEFAULT 0,
    send_rpm       INTEGER NOT NULL DEFAULT 0,
    status_rpm     INTEGER NOT NULL DEFAULT 0,
    media_rpm      INTEGER NOT NULL DEFAULT 0,
    reason         TEXT NOT NULL DEFAULT '',
    decided_by     TEXT NOT NULL DEFAULT '',
    created_at     BIGINT NOT NULL,
    decided_at     BIGINT
);
CREATE INDEX limit_requests_account ON limit_requests (account_id, created_at);
CREATE INDEX limit_requests_pending ON limit_requests (created_at) WHERE status = 'PENDING';

-- +goose Down
DROP TABLE limit_requests;
