-- +goose Up
-- Senders become requests that an operator decides: PENDING, APPROVED or
-- REJECTED (with a reason the account sees). value_key is the value as it
-- is compared: sender IDs and agents case-insensitively; numbers are
-- digits only already, so lowering them changes nothing. A value is
-- approved for at most one account per
-- channel: the partial unique index is what makes two concurrent approvals
-- of one value impossible, whichever node runs them.
ALTER TABLE senders ADD COLUMN status TEXT NOT NULL DEFAULT 'APPROVED'
    CHECK (status IN ('PENDING', 'APPROVED', 'REJECTED'));
ALTER TABLE senders ADD COLUMN value_key TEXT NOT NULL DEFAULT '';
ALTER TABLE senders ADD COLUMN reason TEXT NOT NULL DEFAULT '';
ALTER TABLE senders ADD COLUMN requested_by TEXT NOT NULL DEFAULT '';
ALTER TABLE senders ADD COLUMN decided_by TEXT NOT NULL DEFAULT '';
ALTER TABLE senders ADD COLUMN decided_at BIGINT;
UPDATE senders SET value_key = lower(value);

-- Nothing recorded who added a sender before this version. An account with
-- an owner or admin user could have added its own, so its senders wait for
-- an operator again; an account without one could only have been given
-- them by an operator (the command line or the operator's panel), so they
-- stay approved.
UPDATE senders SET status = 'PENDING'
    WHERE account_id IN (SELECT account_id FROM users WHERE role IN ('owner', 'admin') AND account_id IS NOT NULL);
-- A value that several accounts still hold is nobody's until an operator
-- decides whose it is (a subquery that does not read what the statement
-- changes, so both engines see the same set).
UPDATE senders SET status = 'PENDING'
    WHERE (channel, value_key) IN (SELECT channel, value_key FROM senders WHERE status = 'APPROVED'
        GROUP BY channel, value_key HAVING COUNT(DISTINCT account_id) > 1);

DROP INDEX senders_value;
CREATE UNIQUE INDEX senders_value ON senders (account_id, channel, value_key);
CREATE UNIQUE INDEX senders_held ON senders (channel, value_key) WHERE status = 'APPROVED';
CREATE INDEX senders_pending ON senders (created_at) WHERE status = 'PENDING';

-- +goose Down
DROP INDEX senders_pending;
DROP INDEX senders_held;
DROP INDEX senders_value;
CREATE UNIQUE INDEX senders_value ON senders (account_id, channel, value);
ALTER TABLE senders DROP COLUMN decided_at;
ALTER TABLE senders DROP COLUMN decided_by;
ALTER TABLE senders DROP COLUMN requested_by;
ALTER TABLE senders DROP COLUMN reason;
ALTER TABLE senders DROP COLUMN value_key;
ALTER TABLE senders DROP COLUMN status;
