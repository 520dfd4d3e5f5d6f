package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/msgsvc/msgsvc/internal/domain"
	"strings"
	"time"
)

const conversationMS = int64(24 * time.Hour / time.Millisecond)

// StartConversations counts and records conversations in the caller's
// transaction, refusing with a *DailyLimitError (nothing written) when the
// day's count would pass the limit. The count is one conditional upsert,
// so concurrent sends can never overshoot it.
func (tx *Tx) StartConversations(ctx context.Context, c domain.Conversations) error {
	if err := tx.ReserveConversations(ctx, &c); err != nil {
		return err
	}
	return tx.RecordConversations(ctx, &c)
}

// ReserveConversations counts the conversations a send opens against the
// day's limit, refusing with a *DailyLimitError (nothing written) when the
// count would pass it. The count is one conditional upsert, so concurrent
// sends can never overshoot it.
func (tx *Tx) ReserveConversations(ctx context.Context, c *domain.Conversations) error {
	if c == nil || len(c.Phones) == 0 {
		return nil
	}
	n := len(c.Phones)
	day := domain.DayKey(c.Day)
	refused := func() error {
		used, err := conversationsOn(ctx, tx.queryRow, c.AccountID, c.Env, day)
		if err != nil {
			return err
		}
		return &domain.DailyLimitError{Day: day, Limit: c.Limit, Used: used, Asked: n}
	}
	if c.Limit > 0 && n > c.Limit {
		return refused()
	}
	res, err := tx.exec(ctx, `INSERT INTO wa_conversation_days (account_id, env, day, opened) VALUES ($1, $2, $3, $4)
		ON CONFLICT (account_id, env, day) DO UPDATE SET opened = wa_conversation_days.opened + excluded.opened
		WHERE $5 <= 0 OR wa_conversation_days.opened + excluded.opened <= $5`, c.AccountID, c.Env, day, n, c.Limit)
	if err != nil {
		return fmt.Errorf("count conversations: %w", err)
	}
	if k, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("count conversations: %w", err)
	} else if k == 0 {
		return refused()
	}
	return nil
}

// releaseConversations gives back what reserveConversations counted, when
// the send is refused for another reason in the same transaction.
func (tx *Tx) ReleaseConversations(ctx context.Context, c *domain.Conversations) error {
	if c == nil || len(c.Phones) == 0 {
		return nil
	}
	_, err := tx.exec(ctx, `UPDATE wa_conversation_days SET opened = opened - $4
		WHERE account_id = $1 AND env = $2 AND day = $3`, c.AccountID, c.Env, domain.DayKey(c.Day), len(c.Phones))
	if err != nil {
		return fmt.Errorf("release conversations: %w", err)
	}
	return nil
}

func (tx *Tx) RecordConversations(ctx context.Context, c *domain.Conversations) error {
	if c == nil {
		return nil
	}
	const cols = 4
	for start := 0; start < len(c.Phones); start += 500 {
		chunk := c.Phones[start:min(start+500, len(c.Phones))]
		var b strings.Builder
		b.WriteString(`INSERT INTO wa_conversations (account_id, env, phone, opened_at) VALUES `)
		args := make([]any, 0, len(chunk)*cols)
		tx.s.writeValues(&b, len(chunk), cols)
		for _, p := range chunk {
			args = append(args, c.AccountID, c.Env, p, ms(c.At))
		}
		// A conversation still open keeps its start: it ends 24 h after it
		// was opened, not after the last template.
		b.WriteString(fmt.Sprintf(` ON CONFLICT (account_id, env, phone) DO UPDATE SET opened_at = excluded.opened_at
			WHERE wa_conversations.opened_at <= excluded.opened_at - %d`, conversationMS))
		if _, err := tx.exec(ctx, b.String(), args...); err != nil {
			return fmt.Errorf("record conversations: %w", err)
		}
	}
	return nil
}

func conversationsOn(ctx context.Context, queryRow func(context.Context, string, ...any) rowScanner, accountID string, env domain.Environment, day string) (int, error) {
	var n int
	err := queryRow(ctx, `SELECT opened FROM wa_conversation_days WHERE account_id = $1 AND env = $2 AND day = $3`,
		accountID, env, day).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("conversations of the day: %w", err)
	}
	return n, nil
}

// ConversationsOn is how many conversations an account opened in an
// environment on the UTC day of t.
func (s *Store) ConversationsOn(ctx context.Context, accountID string, env domain.Environment, t time.Time) (int, error) {
	return conversationsOn(ctx, s.rqueryRow, accountID, env, domain.DayKey(t))
}

// OpenConversations maps each phone with a template conversation opened
// in (since, until] to when it opened.
func (s *Store) OpenConversations(ctx context.Context, accountID string, env domain.Environment, phones []string, since, until time.Time) (map[string]time.Time, error) {
	out := make(map[string]time.Time)
	err := inChunks(phones, func(chunk []any) error {
		rows, err := s.rquery(ctx, `SELECT phone, opened_at FROM wa_conversations WHERE account_id = $1 AND env = $2
			AND opened_at > $3 AND opened_at <= $4 AND phone IN (`+s.placeholders(5, len(chunk))+`)`,
			append([]any{accountID, env, ms(since), ms(until)}, chunk...)...)
		return scanPhoneTimes(rows, err, out)
	})
	if err != nil {
		return nil, fmt.Errorf("open conversations: %w", err)
	}
	return out, nil
}

// LastInbounds maps each phone that ever wrote to the account on a channel
// to when it last did: LastInbound for a whole batch in a few queries.
func (s *Store) LastInbounds(ctx context.Context, accountID string, env domain.Environment, channel domain.Channel, phones []string) (map[string]time.Time, error) {
	out := make(map[string]time.Time)
	err := inChunks(phones, func(chunk []any) error {
		rows, err := s.rquery(ctx, `SELECT phone, MAX(received_at) FROM inbound_messages WHERE account_id = $1
			AND env = $2 AND channel = $3 AND phone IN (`+s.placeholders(4, len(chunk))+`) GROUP BY phone`,
			append([]any{accountID, env, channel}, chunk...)...)
		return scanPhoneTimes(rows, err, out)
	})
	if err != nil {
		return nil, fmt.Errorf("last inbounds: %w", err)
	}
	return out, nil
}

// RCSCapabilities maps each phone whose RCS capability was learnt after
// since to whether it supports RCS. Phones not in the map are unknown.
func (s *Store) RCSCapabilities(ctx context.Context, env domain.Environment, phones []string, since time.Time) (map[string]bool, error) {
	out := make(map[string]bool)
	err := inChunks(phones, func(chunk []any) error {
		var p string
		var capable int
		return rowsOf(s.rquery(ctx, `SELECT phone, capable FROM rcs_capabilities WHERE env = $1 AND checked_at > $2
			AND phone IN (`+s.placeholders(3, len(chunk))+`)`, append([]any{env, ms(since)}, chunk...)...)).scan(
			[]any{&p, &capable}, func() { out[p] = capable != 0 })
	})
	if err != nil {
		return nil, fmt.Errorf("rcs capabilities: %w", err)
	}
	return out, nil
}

// SaveRCSCapabilities remembers providers' answers about devices.
func (s *Store) SaveRCSCapabilities(ctx context.Context, env domain.Environment, caps map[string]bool, at time.Time) error {
	if len(caps) == 0 {
		return nil
	}
	const cols = 4
	phones := make([]string, 0, len(caps))
	for p := range caps {
		phones = append(phones, p)
	}
	for start := 0; start < len(phones); start += 500 {
		chunk := phones[start:min(start+500, len(phones))]
		var b strings.Builder
		b.WriteString(`INSERT INTO rcs_capabilities (env, phone, capable, checked_at) VALUES `)
		args := make([]any, 0, len(chunk)*cols)
		s.writeValues(&b, len(chunk), cols)
		for _, p := range chunk {
			args = append(args, env, p, boolInt(caps[p]), ms(at))
		}
		b.WriteString(` ON CONFLICT (env, phone) DO UPDATE SET capable = excluded.capable, checked_at = excluded.checked_at`)
		if _, err := s.wexec(ctx, b.String(), args...); err != nil {
			return fmt.Errorf("save rcs capabilities: %w", err)
		}
	}
	return nil
}

// SetPrices replaces an account's price table (ledger.Prices as JSON; ""
// restores the defaults). Validation is the caller's.
func (s *Store) SetPrices(ctx context.Context, accountID, prices string) error {
	res, err := s.wexec(ctx, `UPDATE accounts SET prices = $2 WHERE id = $1`, accountID, prices)
	return affectedOne(res, err, "set prices")
}

// inChunks calls fn with the values (phones, ids) as query arguments, at
// most 500 at a time (far below every engine's parameter limit).
func inChunks(values []string, fn func(chunk []any) error) error {
	for start := 0; start < len(values); start += 500 {
		end := min(start+500, len(values))
		chunk := make([]any, 0, end-start)
		for _, p := range values[start:end] {
			chunk = append(chunk, p)
		}
		if err := fn(chunk); err != nil {
			return err
		}
	}
	return nil
}

func scanPhoneTimes(rows rowsScanner, err error, out map[string]time.Time) error {
	var p string
	var at sql.NullInt64
	return rowsOf(rows, err).scan([]any{&p, &at}, func() {
		if t := fromMS(at); !t.IsZero() {
			out[p] = t
		}
	})
}
