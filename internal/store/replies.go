package store

import (
	"context"
	"fmt"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// Replies lists an account's replies (its inbound messages), newest first:
// those before the reply id before ("" for the newest), of one
// environment ("" for both) and from one phone ("" for any), at most
// limit.
func (s *Store) Replies(ctx context.Context, f domain.ReplyFilter) ([]domain.Inbound, error) {
	q := `SELECT ` + inbounds.list + ` FROM inbound_messages WHERE account_id = $1`
	args := []any{f.AccountID}
	if f.Env != "" {
		args = append(args, string(f.Env))
		q += fmt.Sprintf(` AND env = $%d`, len(args))
	}
	if f.Phone != "" {
		args = append(args, f.Phone)
		q += fmt.Sprintf(` AND phone = $%d`, len(args))
	}
	if f.Before != "" {
		args = append(args, f.Before)
		q += fmt.Sprintf(` AND id < $%d`, len(args))
	}
	args = append(args, f.Limit)
	q += fmt.Sprintf(` ORDER BY id DESC LIMIT $%d`, len(args))
	return inbounds.scanAll(s.rquery(ctx, q, args...))
}

// RepliesTo lists the replies to one of an account's messages, oldest
// first, at most limit: those recorded with the message, and those
// recorded before replies named their message that answered its campaign
// from its recipient.
func (s *Store) RepliesTo(ctx context.Context, m domain.Message, limit int) ([]domain.Inbound, error) {
	return inbounds.scanAll(s.rquery(ctx, `SELECT `+inbounds.list+` FROM inbound_messages WHERE account_id = $1 AND (message_id = $2
		OR message_id = '' AND campaign_id = $3 AND campaign_id <> '' AND env = $4 AND phone = $5) ORDER BY id LIMIT $6`,
		m.AccountID, m.ID, m.CampaignID, string(m.Env), m.To, limit))
}
