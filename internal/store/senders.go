package store

import (
	"context"
	"fmt"
	"time"

	"msgsvc/internal/domain"
)

var senders = newTable("senders",
	textCol("id", func(s *domain.Sender) *string { return &s.ID }),
	textCol("account_id", func(s *domain.Sender) *string { return &s.AccountID }),
	enumCol("channel", func(s *domain.Sender) *domain.Channel { return &s.Channel }),
	textCol("value", func(s *domain.Sender) *string { return &s.Value }),
	boolCol("is_default", func(s *domain.Sender) *bool { return &s.Default }),
	timeCol("created_at", func(s *domain.Sender) *time.Time { return &s.CreatedAt }),
)

// AddSender approves a sender; when it is the default, any other default of
// the account's channel stops being one. A value the account already has on
// that channel is ErrConflict.
func (s *Store) AddSender(ctx context.Context, in domain.Sender) error {
	return s.Write(ctx, func(tx *Tx) error {
		if in.Default {
			if _, err := tx.exec(ctx, `UPDATE senders SET is_default = 0 WHERE account_id = $1 AND channel = $2`,
				in.AccountID, in.Channel); err != nil {
				return fmt.Errorf("add sender: %w", err)
			}
		}
		if _, err := tx.exec(ctx, senders.insert(s), senders.args(&in, nil)...); err != nil {
			if isUniqueViolation(err) {
				return domain.ErrConflict
			}
			return fmt.Errorf("add sender: %w", err)
		}
		return tx.refreshSenders(ctx, in.AccountID)
	})
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

// refreshSenders copies an account's senders into its row (Account.Senders).
func (tx *Tx) refreshSenders(ctx context.Context, accountID string) error {
	list, err := senders.scanAll(tx.query(ctx, `SELECT `+senders.list+` FROM senders WHERE account_id = $1 ORDER BY channel, value`,
		accountID))
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

// Senders lists an account's senders by channel, then value.
func (s *Store) Senders(ctx context.Context, accountID string) ([]domain.Sender, error) {
	return senders.scanAll(s.rquery(ctx, `SELECT `+senders.list+` FROM senders WHERE account_id = $1
		ORDER BY channel, value`, accountID))
}

// SenderOwners lists the accounts that have a value as an approved sender
// on a channel: an inbound message sent to that value belongs to them.
func (s *Store) SenderOwners(ctx context.Context, channel domain.Channel, value string) ([]string, error) {
	return s.ids(ctx, `SELECT account_id FROM senders WHERE channel = $1 AND value = $2 ORDER BY account_id`, channel, value)
}
