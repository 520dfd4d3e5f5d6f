package store

import (
	"context"
	"fmt"
	"github.com/msgsvc/msgsvc/internal/domain"
	"time"
)

var retentionScans = map[string]string{
	domain.RetainMessages: `SELECT id, status, to_phone, '' FROM messages WHERE account_id = $1 AND id > $2 AND id < $3
		ORDER BY id LIMIT $4`,
	domain.RetainInbound: `SELECT id, '', phone, '' FROM inbound_messages WHERE account_id = $1 AND id > $2 AND id < $3
		ORDER BY id LIMIT $4`,
	domain.RetainEvents: `SELECT id, state, '', body FROM webhook_events WHERE account_id = $1 AND id > $2 AND id < $3
		ORDER BY id LIMIT $4`,
}

// RetentionRows lists an account's rows of a kind with after < id <
// before, in id (creation) order, through the (account_id, id) indexes.
func (s *Store) RetentionRows(ctx context.Context, kind, accountID, after, before string, limit int) ([]domain.RetentionRow, error) {
	q, ok := retentionScans[kind]
	if !ok {
		return nil, fmt.Errorf("retention scan: unknown kind %q", kind)
	}
	return s.retentionRows(ctx, q, accountID, after, before, limit)
}

// Redact applies a redaction to rows of a kind in a transaction of its own.
func (s *Store) Redact(ctx context.Context, kind string, ids []string, r domain.Redaction) error {
	if len(ids) == 0 {
		return nil
	}
	return s.Write(ctx, func(tx *Tx) error {
		switch kind {
		case domain.RetainMessages:
			return tx.RedactMessages(ctx, ids, r)
		case domain.RetainInbound:
			return tx.RedactInbound(ctx, ids, r)
		case domain.RetainEvents:
			return tx.RedactEvents(ctx, ids, r)
		}
		return fmt.Errorf("redact: unknown kind %q", kind)
	})
}

func (s *Store) retentionRows(ctx context.Context, query string, args ...any) ([]domain.RetentionRow, error) {
	var out []domain.RetentionRow
	var r domain.RetentionRow
	err := rowsOf(s.rquery(ctx, query, args...)).scan([]any{&r.ID, &r.State, &r.Phone, &r.Body}, func() { out = append(out, r) })
	if err != nil {
		return nil, fmt.Errorf("retention scan: %w", err)
	}
	return out, nil
}

// RedactMessages erases the text and rich content of messages and hashes
// their recipient, and redacts the webhook events about them, in the
// caller's transaction. Status, prices, counts and the ledger stay.
func (tx *Tx) RedactMessages(ctx context.Context, ids []string, r domain.Redaction) error {
	return inChunks(ids, func(chunk []any) error {
		err := tx.redactPhones(ctx, r, `SELECT id, to_phone FROM messages WHERE id IN (`, chunk,
			`UPDATE messages SET to_phone = $2, body = '', content = '' WHERE id = $1`, "redact messages")
		if err != nil {
			return err
		}
		evs, err := tx.eventBodies(ctx, `message_id`, chunk)
		if err != nil {
			return fmt.Errorf("redact messages' events: %w", err)
		}
		return tx.redactEventBodies(ctx, evs, r)
	})
}

// RedactInbound erases the text of replies and hashes their sender, in the
// caller's transaction.
func (tx *Tx) RedactInbound(ctx context.Context, ids []string, r domain.Redaction) error {
	return inChunks(ids, func(chunk []any) error {
		return tx.redactPhones(ctx, r, `SELECT id, phone FROM inbound_messages WHERE id IN (`, chunk,
			`UPDATE inbound_messages SET phone = $2, body = '' WHERE id = $1`, "redact replies")
	})
}

// RedactEvents rewrites webhook events' bodies with their number hashed and
// a reply's text erased, in the caller's transaction.
func (tx *Tx) RedactEvents(ctx context.Context, ids []string, r domain.Redaction) error {
	return inChunks(ids, func(chunk []any) error {
		evs, err := tx.eventBodies(ctx, `id`, chunk)
		if err != nil {
			return fmt.Errorf("redact events: %w", err)
		}
		return tx.redactEventBodies(ctx, evs, r)
	})
}

// redactPhones reads the (id, phone) pairs of the rows in chunk and runs
// update with each id and its phone hashed.
func (tx *Tx) redactPhones(ctx context.Context, r domain.Redaction, selectIn string, chunk []any, update, what string) error {
	rows, err := tx.pairs(ctx, selectIn, chunk)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	for _, row := range rows {
		if _, err := tx.exec(ctx, update, row[0], r.Phone(row[1])); err != nil {
			return fmt.Errorf("%s: %s: %w", what, row[0], err)
		}
	}
	return nil
}

// eventBody is what an event holds of personal data: the feed's body and
// the Twilio callback's form beside it.
type eventBody struct{ id, body, form string }

// eventBodies reads the bodies of the events whose column col is in args.
func (tx *Tx) eventBodies(ctx context.Context, col string, args []any) ([]eventBody, error) {
	var out []eventBody
	var e eventBody
	err := rowsOf(tx.query(ctx, `SELECT id, body, form FROM webhook_events WHERE `+col+` IN (`+
		tx.s.placeholders(1, len(args))+`)`, args...)).scan([]any{&e.id, &e.body, &e.form}, func() { out = append(out, e) })
	return out, err
}

// redactEventBodies redacts the body and the form of each event together,
// in one update: the retention sweep tells a redacted event by its body.
func (tx *Tx) redactEventBodies(ctx context.Context, evs []eventBody, r domain.Redaction) error {
	for _, ev := range evs {
		body, err := r.EventBody(ev.body)
		if err != nil {
			return fmt.Errorf("redact event %s: %w", ev.id, err)
		}
		form := ev.form
		if form != "" {
			if form, err = r.EventBody(form); err != nil {
				return fmt.Errorf("redact event %s: %w", ev.id, err)
			}
		}
		if body == ev.body && form == ev.form {
			continue
		}
		if _, err := tx.exec(ctx, `UPDATE webhook_events SET body = $2, form = $3 WHERE id = $1`, ev.id, body, form); err != nil {
			return fmt.Errorf("redact event: %w", err)
		}
	}
	return nil
}

// DeleteConversationsBefore forgets which numbers an account's WhatsApp
// templates opened conversations with before t: they matter for 24 hours,
// and the retention of personal data ends them.
func (s *Store) DeleteConversationsBefore(ctx context.Context, accountID string, t time.Time) error {
	return s.run(ctx, "delete old conversations", `DELETE FROM wa_conversations WHERE account_id = $1 AND opened_at < $2`, accountID, ms(t))
}

// pairs runs a query of two text columns that ends in "IN (", completed
// with the placeholders of args.
func (tx *Tx) pairs(ctx context.Context, queryIn string, args []any) ([][2]string, error) {
	var out [][2]string
	var p [2]string
	err := rowsOf(tx.query(ctx, queryIn+tx.s.placeholders(1, len(args))+`)`, args...)).scan(
		[]any{&p[0], &p[1]}, func() { out = append(out, p) })
	return out, err
}
