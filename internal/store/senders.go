package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/msgsvc/msgsvc/internal/domain"
)

var senders = newTable("senders", func(s *domain.Sender, c cols) cols {
	return c.add(textCol("id", &s.ID), textCol("account_id", &s.AccountID), enumCol("channel", &s.Channel),
		textCol("value", &s.Value), boolCol("is_default", &s.Default), timeCol("created_at", &s.CreatedAt),
		textCol("status", &s.Status), valueKeyCol("value_key", &s.Value), textCol("reason", &s.Reason),
		textCol("requested_by", &s.RequestedBy), textCol("decided_by", &s.DecidedBy),
		timeCol("decided_at", &s.DecidedAt))
})

// valueKeyCol writes the key that makes a sender's value unique
// (domain.SenderKey); it is read back nowhere.
func valueKeyCol(name string, value *string) field { return field{name, (*senderKey)(value)} }

type senderKey string

func (k *senderKey) arg() any  { return domain.SenderKey(string(*k)) }
func (k *senderKey) dest() any { return new(string) }

// AddSender records a sender as in.Status says (APPROVED when empty); when
// it is the default, any other default of the account's channel stops
// being one. A value the account already has on that channel is
// domain.ErrConflict; approving a value another account holds is
// domain.ErrSenderTaken, and so is asking for one.
func (s *Store) AddSender(ctx context.Context, in domain.Sender) error {
	if in.Status == "" {
		in.Status = domain.SenderApproved
	}
	return s.Write(ctx, func(tx *Tx) error {
		if err := tx.senderFree(ctx, in.AccountID, in.Channel, in.Value); err != nil {
			return err
		}
		if in.Default {
			if _, err := tx.exec(ctx, `UPDATE senders SET is_default = 0 WHERE account_id = $1 AND channel = $2`,
				in.AccountID, in.Channel); err != nil {
				return fmt.Errorf("add sender: %w", err)
			}
		}
		if _, err := tx.exec(ctx, senders.insert(s), senders.args(&in, nil)...); err != nil {
			return inserted(err, "add sender")
		}
		return tx.refreshSenders(ctx, in.AccountID)
	})
}

// senderFree refuses a value another account holds (domain.ErrSenderTaken).
func (tx *Tx) senderFree(ctx context.Context, accountID string, ch domain.Channel, value string) error {
	var n int
	err := tx.queryRow(ctx, `SELECT COUNT(*) FROM senders WHERE channel = $1 AND value_key = $2 AND status = 'APPROVED'
		AND account_id <> $3`, ch, domain.SenderKey(value), accountID).Scan(&n)
	if err != nil {
		return fmt.Errorf("sender held: %w", err)
	}
	if n > 0 {
		return domain.ErrSenderTaken
	}
	return nil
}

// Sender reads one sender of any account.
func (s *Store) Sender(ctx context.Context, id string) (domain.Sender, error) {
	return senders.scan(s.rqueryRow(ctx, `SELECT `+senders.list+` FROM senders WHERE id = $1`, id))
}

// PendingSenders lists every account's undecided sender requests, oldest
// first: the operators' queue.
func (s *Store) PendingSenders(ctx context.Context) ([]domain.Sender, error) {
	return senders.scanAll(s.rquery(ctx, `SELECT `+senders.list+` FROM senders WHERE status = 'PENDING'
		ORDER BY created_at, id`))
}

// DecideSender records an operator's decision on a pending sender (d.ID,
// d.Status APPROVED or REJECTED, d.Reason, d.DecidedBy, d.DecidedAt) and
// refreshes the account's approved senders in the same transaction, so
// sends may name it (and inbound messages to it are the account's) from
// the next request on every node. Approving a value another account holds
// is domain.ErrSenderTaken; a sender already decided is
// domain.ErrSenderDecided.
func (s *Store) DecideSender(ctx context.Context, d domain.Sender) (domain.Sender, error) {
	var out domain.Sender
	err := s.Write(ctx, func(tx *Tx) error {
		cur, err := senders.scan(tx.queryRow(ctx, `SELECT `+senders.list+` FROM senders WHERE id = $1`, d.ID))
		if err != nil {
			return err
		}
		if cur.Status != domain.SenderPending {
			return domain.ErrSenderDecided
		}
		if d.Status == domain.SenderApproved {
			if err := tx.senderFree(ctx, cur.AccountID, cur.Channel, cur.Value); err != nil {
				return err
			}
		}
		res, err := tx.exec(ctx, `UPDATE senders SET status = $2, reason = $3, decided_by = $4, decided_at = $5
			WHERE id = $1 AND status = 'PENDING'`, d.ID, d.Status, d.Reason, d.DecidedBy, nullMS(d.DecidedAt))
		if err != nil && isUniqueViolation(err) {
			return domain.ErrSenderTaken // approved for another account by a concurrent decision
		}
		if err := affectedOne(res, err, "decide sender"); err != nil {
			if errors.Is(err, domain.ErrNotFound) {
				return domain.ErrSenderDecided
			}
			return err
		}
		cur.Status, cur.Reason, cur.DecidedBy, cur.DecidedAt = d.Status, d.Reason, d.DecidedBy, d.DecidedAt
		out = cur
		return tx.refreshSenders(ctx, cur.AccountID)
	})
	return out, err
}

// RemoveSender withdraws a sender of an account.
func (s *Store) RemoveSender(ctx context.Context, accountID, id string) error {
	return s.Write(ctx, func(tx *Tx) error {
		res, err := tx.exec(ctx, `DELETE FROM senders WHERE id = $1 AND account_id = $2`, id, accountID)
		if err := affectedOne(res, err, "remove sender"); err != nil {
			return err
		}
		return tx.refreshSenders(ctx, accountID)
	})
}

// refreshSenders copies an account's approved senders into its row
// (Account.Senders): what a send may name, read with the API key.
func (tx *Tx) refreshSenders(ctx context.Context, accountID string) error {
	list, err := senders.scanAll(tx.query(ctx, `SELECT `+senders.list+` FROM senders WHERE account_id = $1
		AND status = 'APPROVED' ORDER BY channel, value`, accountID))
	if err != nil {
		return err
	}
	set := domain.Senders{}
	for _, sd := range list {
		cs := set[sd.Channel]
		cs.Values = append(cs.Values, sd.Value)
		if sd.Default {
			cs.Default = sd.Value
		}
		set[sd.Channel] = cs
	}
	var v any = ""
	if len(set) > 0 {
		v = jsonText(set)
	}
	if _, err := tx.exec(ctx, `UPDATE accounts SET senders = $2 WHERE id = $1`, accountID, v); err != nil {
		return fmt.Errorf("refresh senders: %w", err)
	}
	return nil
}

// refreshAllSenders rewrites every account's approved senders: after the
// migration that made senders requests, the rows say what the copies do
// not yet.
func (s *Store) refreshAllSenders(ctx context.Context) error {
	ids, err := s.ids(ctx, `SELECT id FROM accounts WHERE senders <> '' OR id IN (SELECT account_id FROM senders)`)
	if err != nil {
		return err
	}
	for _, acct := range ids {
		if err := s.Write(ctx, func(tx *Tx) error { return tx.refreshSenders(ctx, acct) }); err != nil {
			return err
		}
	}
	return nil
}

// Senders lists an account's senders, whatever their state, by channel,
// then value.
func (s *Store) Senders(ctx context.Context, accountID string) ([]domain.Sender, error) {
	return senders.scanAll(s.rquery(ctx, `SELECT `+senders.list+` FROM senders WHERE account_id = $1
		ORDER BY channel, value`, accountID))
}

// SenderOwners lists the accounts that have a value as an approved sender
// on a channel (at most one): an inbound message sent to that value
// belongs to it. A pending or rejected sender owns nothing.
func (s *Store) SenderOwners(ctx context.Context, channel domain.Channel, value string) ([]string, error) {
	return s.ids(ctx, `SELECT account_id FROM senders WHERE channel = $1 AND value_key = $2 AND status = 'APPROVED'
		ORDER BY account_id`, channel, domain.SenderKey(value))
}
