-- +goose Up
-- Senders are compared in their canonical form (domain.SenderKey): a
-- sender ID lower-cased, without surrounding spaces and with inner runs of
-- spaces read as one; a number (digits, perhaps with "+") without its "+"
-- and leading zeros. Before, "BetaShop " and "0015550001111" were other
-- values than "BetaShop" and "15550001111", so a second account could
-- hold a twin of a first account's sender. The key is recomputed here with
-- the same rules as the Go code (ltrim/rtrim/replace/lower behave the same
-- on both engines for these characters).
DROP INDEX senders_held;
DROP INDEX senders_value;

UPDATE senders SET value_key = CASE
    WHEN value <> '' AND ltrim(value, '+0123456789') = '' THEN ltrim(value, '+0')
    ELSE replace(replace(replace(replace(replace(replace(lower(ltrim(rtrim(value, ' '), ' ')),
        '  ', ' '), '  ', ' '), '  ', ' '), '  ', ' '), '  ', ' '), '  ', ' ')
    END;

-- Twins within one account (it asked for "BetaShop" and "BetaShop "): the
-- best of them stays, approved before pending or rejected, the value
-- already in canonical form before one that is not, the oldest first; the
-- others go (a request, or a duplicate of a value the account keeps).
DELETE FROM senders WHERE id IN (
    SELECT s.id FROM senders s JOIN senders t
        ON t.account_id = s.account_id AND t.channel = s.channel AND t.value_key = s.value_key AND t.id <> s.id
    WHERE (CASE WHEN t.status = 'APPROVED' THEN 2 ELSE 0 END) + (CASE WHEN lower(t.value) = t.value_key THEN 1 ELSE 0 END)
        > (CASE WHEN s.status = 'APPROVED' THEN 2 ELSE 0 END) + (CASE WHEN lower(s.value) = s.value_key THEN 1 ELSE 0 END)
       OR ((CASE WHEN t.status = 'APPROVED' THEN 2 ELSE 0 END) + (CASE WHEN lower(t.value) = t.value_key THEN 1 ELSE 0 END)
        = (CASE WHEN s.status = 'APPROVED' THEN 2 ELSE 0 END) + (CASE WHEN lower(s.value) = s.value_key THEN 1 ELSE 0 END)
        AND t.id < s.id));

-- Twins approved for several accounts: the one written in canonical form
-- (the original; a twin needs a space or a zero more) keeps it, the others
-- wait for an operator again, where approving them is now SENDER_TAKEN.
-- When none is canonical, nobody's is kept: all wait, as with migration 70.
UPDATE senders SET status = 'PENDING', decided_by = '', decided_at = NULL
    WHERE status = 'APPROVED' AND lower(value) <> value_key
    AND (channel, value_key) IN (SELECT channel, value_key FROM senders WHERE status = 'APPROVED'
        GROUP BY channel, value_key HAVING COUNT(DISTINCT account_id) > 1);
UPDATE senders SET status = 'PENDING', decided_by = '', decided_at = NULL
    WHERE status = 'APPROVED'
    AND (channel, value_key) IN (SELECT channel, value_key FROM senders WHERE status = 'APPROVED'
        GROUP BY channel, value_key HAVING COUNT(DISTINCT account_id) > 1);

CREATE UNIQUE INDEX senders_value ON senders (account_id, channel, value_key);
CREATE UNIQUE INDEX senders_held ON senders (channel, value_key) WHERE status = 'APPROVED';

-- +goose Down
DROP INDEX senders_held;
DROP INDEX senders_value;
UPDATE senders SET value_key = lower(value);
CREATE UNIQUE INDEX senders_value ON senders (account_id, channel, value_key);
CREATE UNIQUE INDEX senders_held ON senders (channel, value_key) WHERE status = 'APPROVED';
