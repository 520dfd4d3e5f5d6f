package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Campaign is one send request: one or many messages.
type Campaign struct {
	ID          string
	AccountID   string
	KeyID       string
	Env         string
	Type        string
	CallbackURL string
	Total       int
	CreatedAt   time.Time
}

// Message is one recipient of a campaign, and its place in the dispatch queue.
type Message struct {
	ID            string
	CampaignID    string
	AccountID     string
	Env           string
	To            string
	CountryCode   string
	Type          string // what was asked for
	Channel       string // what carries it (SMS after an RCS fallback)
	Body          string
	Content       string // JSON of the rich content (media, buttons, …), empty for plain text
	Status        string
	Segments      int
	Encoding      string
	Credits       int64 // price of the message, micro-credits
	Charged       int64 // what was actually debited and not yet refunded (0 for test keys)
	Provider      string
	ProviderRef   string
	ErrorCode     string
	ErrorMessage  string
	Reference     string
	CallbackURL   string
	CreatedAt     time.Time
	UpdatedAt     time.Time
	SentAt        time.Time
	DeliveredAt   time.Time
	ReadAt        time.Time
	FailedAt      time.Time
	CanceledAt    time.Time
	ScheduledAt   time.Time
	ExpiresAt     time.Time
	NextAttemptAt time.Time // zero when not waiting for dispatch
	LeaseOwner    string
	Attempts      int
}

const messageCols = `id, campaign_id, account_id, env, to_phone, country_code, type, channel, body, content, status,
	segments, encoding, credits, charged, provider, provider_ref, error_code, error_message, reference, callback_url,
	created_at, updated_at, sent_at, delivered_at, read_at, failed_at, canceled_at, scheduled_at, expires_at,
	next_attempt_at, lease_owner, attempts`

const messageColCount = 33

func scanMessage(row interface{ Scan(...any) error }) (Message, error) {
	var m Message
	var created, updated, sent, delivered, read, failed, canceled, scheduled, expires, next sql.NullInt64
	err := row.Scan(&m.ID, &m.CampaignID, &m.AccountID, &m.Env, &m.To, &m.CountryCode, &m.Type, &m.Channel, &m.Body,
		&m.Content, &m.Status, &m.Segments, &m.Encoding, &m.Credits, &m.Charged, &m.Provider, &m.ProviderRef,
		&m.ErrorCode, &m.ErrorMessage, &m.Reference, &m.CallbackURL, &created, &updated, &sent, &delivered, &read,
		&failed, &canceled, &scheduled, &expires, &next, &m.LeaseOwner, &m.Attempts)
	if errors.Is(err, sql.ErrNoRows) {
		return m, ErrNotFound
	}
	if err != nil {
		return m, fmt.Errorf("scan message: %w", err)
	}
	m.CreatedAt, m.UpdatedAt, m.SentAt, m.DeliveredAt = fromMS(created), fromMS(updated), fromMS(sent), fromMS(delivered)
	m.ReadAt, m.FailedAt, m.CanceledAt, m.ScheduledAt = fromMS(read), fromMS(failed), fromMS(canceled), fromMS(scheduled)
	m.ExpiresAt, m.NextAttemptAt = fromMS(expires), fromMS(next)
	return m, nil
}

func scanMessages(rows *sql.Rows, err error) ([]Message, error) {
	if err != nil {
		return nil, fmt.Errorf("query messages: %w", err)
	}
	defer rows.Close()
	var out []Message
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("query messages: %w", err)
	}
	return out, nil
}

func messageArgs(m Message) []any {
	return []any{m.ID, m.CampaignID, m.AccountID, m.Env, m.To, m.CountryCode, m.Type, m.Channel, m.Body, m.Content,
		m.Status, m.Segments, m.Encoding, m.Credits, m.Charged, m.Provider, m.ProviderRef, m.ErrorCode, m.ErrorMessage,
		m.Reference, m.CallbackURL, ms(m.CreatedAt), ms(m.UpdatedAt), nullMS(m.SentAt), nullMS(m.DeliveredAt),
		nullMS(m.ReadAt), nullMS(m.FailedAt), nullMS(m.CanceledAt), nullMS(m.ScheduledAt), ms(m.ExpiresAt),
		nullMS(m.NextAttemptAt), m.LeaseOwner, m.Attempts}
}

// Idempotency is a remembered response to a POST with an Idempotency-Key.
type Idempotency struct {
	KeyID       string
	Key         string
	RequestHash string
	StatusCode  int
	Response    []byte
	CreatedAt   time.Time
}

// Send is one accepted send request, ready to be written: the campaign, its
// messages, the debit, and the response to remember under its idempotency key.
type Send struct {
	Campaign Campaign
	Messages []Message
	Idem     *Idempotency
	// Conversations are the WhatsApp conversations the send opens; the
	// daily limit is checked with the debit, atomically (see channels.go).
	Conversations *Conversations
}

// SendResult tells how one Send of a batch ended. Replay is set when the
// idempotency key was already used for the same request; Err is
// ErrInsufficientCredits, a *DailyLimitError, ErrIdempotencyConflict or a
// database error.
type SendResult struct {
	Replay *Idempotency
	Err    error
}

// CommitSends writes a batch of sends in one transaction (group commit): on
// SQLite one fsync for many requests is the difference between hundreds and
// thousands of sends per second. A business refusal of one send (credits,
// idempotency) does not affect the others; a database error fails the batch,
// and the caller may retry the sends one by one.
func (s *Store) CommitSends(ctx context.Context, sends []Send) ([]SendResult, error) {
	var results []SendResult
	err := s.Write(ctx, func(tx *Tx) error {
		results = make([]SendResult, len(sends))
		for i, snd := range sends {
			r, err := tx.commitSend(ctx, snd)
			if err != nil {
				return err
			}
			results[i] = r
		}
		return nil
	})
	return results, err
}

func (tx *Tx) commitSend(ctx context.Context, snd Send) (SendResult, error) {
	if snd.Idem != nil {
		prev, fresh, err := tx.claimIdempotency(ctx, *snd.Idem)
		if err != nil {
			return SendResult{}, err
		}
		if !fresh {
			if prev.RequestHash != snd.Idem.RequestHash {
				return SendResult{Err: ErrIdempotencyConflict}, nil
			}
			return SendResult{Replay: &prev}, nil
		}
	}
	if err := tx.reserveConversations(ctx, snd.Conversations); err != nil {
		return tx.refuseSend(ctx, snd, err)
	}
	var total int64
	for _, m := range snd.Messages {
		total += m.Charged
	}
	var balance int64
	if total > 0 {
		var err error
		balance, err = tx.adjustBalance(ctx, snd.Campaign.AccountID, -total)
		if errors.Is(err, ErrInsufficientCredits) {
			if err := tx.releaseConversations(ctx, snd.Conversations); err != nil {
				return SendResult{}, err
			}
			if snd.Idem != nil {
				// A refused send is not remembered: the client may top up and
				// retry with the same key.
				if _, err := tx.exec(ctx, `DELETE FROM idempotency_keys WHERE key_id = $1 AND idem_key = $2`,
					snd.Idem.KeyID, snd.Idem.Key); err != nil {
					return SendResult{}, fmt.Errorf("forget idempotency key: %w", err)
				}
			}
			return SendResult{Err: ErrInsufficientCredits}, nil
		}
		if err != nil {
			return SendResult{}, err
		}
	}
	if err := tx.recordConversations(ctx, snd.Conversations); err != nil {
		return SendResult{}, err
	}
	c := snd.Campaign
	if _, err := tx.exec(ctx, `INSERT INTO campaigns (id, account_id, key_id, env, type, callback_url, total, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, c.ID, c.AccountID, c.KeyID, c.Env, c.Type, c.CallbackURL, c.Total, ms(c.CreatedAt)); err != nil {
		return SendResult{}, fmt.Errorf("insert campaign: %w", err)
	}
	if err := tx.insertMessages(ctx, snd.Messages); err != nil {
		return SendResult{}, err
	}
	if total > 0 {
		entries := make([]LedgerEntry, 0, len(snd.Messages))
		running := balance + total
		for _, m := range snd.Messages {
			if m.Charged == 0 {
				continue
			}
			running -= m.Charged
			entries = append(entries, LedgerEntry{ID: newLedgerID(c.CreatedAt), AccountID: c.AccountID, Amount: -m.Charged,
				BalanceAfter: running, Kind: LedgerDebit, MessageID: m.ID, CampaignID: c.ID, CreatedAt: c.CreatedAt})
		}
		if err := tx.InsertLedger(ctx, entries); err != nil {
			return SendResult{}, err
		}
	}
	return SendResult{}, nil
}

// claimIdempotency inserts the key's row, or returns the existing one. On
// PostgreSQL a concurrent insert of the same key waits for the first
// transaction, so two racing requests never both send.
func (tx *Tx) claimIdempotency(ctx context.Context, in Idempotency) (Idempotency, bool, error) {
	res, err := tx.exec(ctx, `INSERT INTO idempotency_keys (key_id, idem_key, request_hash, status_code, response, created_at)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (key_id, idem_key) DO NOTHING`,
		in.KeyID, in.Key, in.RequestHash, in.StatusCode, string(in.Response), ms(in.CreatedAt))
	if err != nil {
		return Idempotency{}, false, fmt.Errorf("insert idempotency key: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return in, true, nil
	}
	prev, err := idempotency(ctx, tx.queryRow, in.KeyID, in.Key)
	return prev, false, err
}

func idempotency(ctx context.Context, queryRow func(context.Context, string, ...any) *sql.Row, keyID, key string) (Idempotency, error) {
	var out Idempotency
	var resp string
	var at int64
	err := queryRow(ctx, `SELECT key_id, idem_key, request_hash, status_code, response, created_at
		FROM idempotency_keys WHERE key_id = $1 AND idem_key = $2`, keyID, key).
		Scan(&out.KeyID, &out.Key, &out.RequestHash, &out.StatusCode, &resp, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return out, ErrNotFound
	}
	if err != nil {
		return out, fmt.Errorf("read idempotency key: %w", err)
	}
	out.Response, out.CreatedAt = []byte(resp), time.UnixMilli(at).UTC()
	return out, nil
}

// Idempotency reads a remembered response.
func (s *Store) Idempotency(ctx context.Context, keyID, key string) (Idempotency, error) {
	return idempotency(ctx, s.rqueryRow, keyID, key)
}

// SaveIdempotency remembers a response outside a send (cancel, upload, …).
// The first writer wins; a concurrent duplicate is dropped.
func (s *Store) SaveIdempotency(ctx context.Context, in Idempotency) error {
	_, err := s.wexec(ctx, `INSERT INTO idempotency_keys (key_id, idem_key, request_hash, status_code, response, created_at)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (key_id, idem_key) DO NOTHING`,
		in.KeyID, in.Key, in.RequestHash, in.StatusCode, string(in.Response), ms(in.CreatedAt))
	if err != nil {
		return fmt.Errorf("save idempotency key: %w", err)
	}
	return nil
}

// DeleteIdempotencyBefore drops remembered responses older than t.
func (s *Store) DeleteIdempotencyBefore(ctx context.Context, t time.Time) (int64, error) {
	res, err := s.wexec(ctx, `DELETE FROM idempotency_keys WHERE created_at < $1`, ms(t))
	if err != nil {
		return 0, fmt.Errorf("delete idempotency keys: %w", err)
	}
	return res.RowsAffected()
}

func (tx *Tx) insertMessages(ctx context.Context, msgs []Message) error {
	const chunkSize = 400 // 400 × 33 parameters stays under SQLite's 32766
	for start := 0; start < len(msgs); start += chunkSize {
		chunk := msgs[start:min(start+chunkSize, len(msgs))]
		var b strings.Builder
		b.WriteString(`INSERT INTO messages (` + messageCols + `) VALUES `)
		args := make([]any, 0, len(chunk)*messageColCount)
		for i, m := range chunk {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(" + tx.s.placeholders(i*messageColCount+1, messageColCount) + ")")
			args = append(args, messageArgs(m)...)
		}
		if _, err := tx.exec(ctx, b.String(), args...); err != nil {
			return fmt.Errorf("insert messages: %w", err)
		}
	}
	return nil
}

// Message reads one message of an account.
func (s *Store) Message(ctx context.Context, accountID, messageID string) (Message, error) {
	return scanMessage(s.rqueryRow(ctx, `SELECT `+messageCols+` FROM messages WHERE id = $1 AND account_id = $2`,
		messageID, accountID))
}

// Campaign reads one campaign of an account.
func (s *Store) Campaign(ctx context.Context, accountID, campaignID string) (Campaign, error) {
	var c Campaign
	var at int64
	err := s.rqueryRow(ctx, `SELECT id, account_id, key_id, env, type, callback_url, total, created_at
		FROM campaigns WHERE id = $1 AND account_id = $2`, campaignID, accountID).
		Scan(&c.ID, &c.AccountID, &c.KeyID, &c.Env, &c.Type, &c.CallbackURL, &c.Total, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return c, ErrNotFound
	}
	if err != nil {
		return c, fmt.Errorf("read campaign: %w", err)
	}
	c.CreatedAt = time.UnixMilli(at).UTC()
	return c, nil
}

// CampaignCounts counts a campaign's messages per status.
func (s *Store) CampaignCounts(ctx context.Context, campaignID string) (map[string]int, error) {
	rows, err := s.rquery(ctx, `SELECT status, COUNT(*) FROM messages WHERE campaign_id = $1 GROUP BY status`, campaignID)
	if err != nil {
		return nil, fmt.Errorf("campaign counts: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return nil, fmt.Errorf("campaign counts: %w", err)
		}
		out[st] = n
	}
	return out, rows.Err()
}

// CampaignMessages pages through a campaign's messages in id order, after
// the given id.
func (s *Store) CampaignMessages(ctx context.Context, campaignID, after string, limit int) ([]Message, error) {
	return scanMessages(s.rquery(ctx, `SELECT `+messageCols+` FROM messages
		WHERE campaign_id = $1 AND id > $2 ORDER BY id LIMIT $3`, campaignID, after, limit))
}

// MessageFilter narrows a message search (the panel's Messages page).
type MessageFilter struct {
	AccountID  string
	Phone      string
	Status     string
	CampaignID string
	From, To   time.Time
	Before     string // cursor: ids lower than this
	Limit      int
}

// SearchMessages lists an account's messages, newest first.
func (s *Store) SearchMessages(ctx context.Context, f MessageFilter) ([]Message, error) {
	query := `SELECT ` + messageCols + ` FROM messages WHERE account_id = $1`
	args := []any{f.AccountID}
	add := func(cond string, v any) {
		args = append(args, v)
		query += fmt.Sprintf(" AND "+cond, len(args))
	}
	if f.Phone != "" {
		add("to_phone = $%d", f.Phone)
	}
	if f.Status != "" {
		add("status = $%d", f.Status)
	}
	if f.CampaignID != "" {
		add("campaign_id = $%d", f.CampaignID)
	}
	if !f.From.IsZero() {
		add("created_at >= $%d", ms(f.From))
	}
	if !f.To.IsZero() {
		add("created_at < $%d", ms(f.To))
	}
	if f.Before != "" {
		add("id < $%d", f.Before)
	}
	if f.Limit <= 0 || f.Limit > 1000 {
		f.Limit = 100
	}
	args = append(args, f.Limit)
	query += fmt.Sprintf(" ORDER BY id DESC LIMIT $%d", len(args))
	return scanMessages(s.rquery(ctx, query, args...))
}

// ClaimDue leases up to limit messages that are due for dispatch. The lease
// is expressed by moving next_attempt_at to the end of the lease: if the
// owner dies, the message becomes due again without any rescue job.
func (s *Store) ClaimDue(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]Message, error) {
	lock := ""
	if s.dialect == Postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	var out []Message
	err := s.Write(ctx, func(tx *Tx) error {
		var err error
		out, err = scanMessages(tx.query(ctx, `UPDATE messages SET lease_owner = $1, next_attempt_at = $2,
			attempts = attempts + 1 WHERE id IN (SELECT id FROM messages WHERE next_attempt_at <= $3
			ORDER BY next_attempt_at LIMIT $4`+lock+`) RETURNING `+messageCols,
			owner, ms(now.Add(lease)), ms(now), limit))
		return err
	})
	return out, err
}

// LockMessages reads messages for an update in this transaction, in id
// order (a fixed lock order keeps concurrent batches free of deadlocks).
func (tx *Tx) LockMessages(ctx context.Context, ids []string) (map[string]Message, error) {
	out := make(map[string]Message, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	sorted := append([]string(nil), ids...)
	sort.Strings(sorted)
	lock := ""
	if tx.s.dialect == Postgres {
		lock = " ORDER BY id FOR UPDATE"
	}
	for start := 0; start < len(sorted); start += 500 {
		chunk := sorted[start:min(start+500, len(sorted))]
		args := make([]any, len(chunk))
		for i, v := range chunk {
			args[i] = v
		}
		msgs, err := scanMessages(tx.query(ctx, `SELECT `+messageCols+` FROM messages WHERE id IN (`+
			tx.s.placeholders(1, len(chunk))+`)`+lock, args...))
		if err != nil {
			return nil, err
		}
		for _, m := range msgs {
			out[m.ID] = m
		}
	}
	return out, nil
}

// MessageIDsByProviderRef maps provider references (e.g. SMPP message ids)
// to message ids.
func (tx *Tx) MessageIDsByProviderRef(ctx context.Context, provider string, refs []string) (map[string]string, error) {
	out := make(map[string]string, len(refs))
	for start := 0; start < len(refs); start += 500 {
		chunk := refs[start:min(start+500, len(refs))]
		args := make([]any, 0, len(chunk)+1)
		args = append(args, provider)
		for _, r := range chunk {
			args = append(args, r)
		}
		rows, err := tx.query(ctx, `SELECT provider_ref, id FROM messages WHERE provider = $1 AND provider_ref IN (`+
			tx.s.placeholders(2, len(chunk))+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("messages by provider ref: %w", err)
		}
		for rows.Next() {
			var ref, mid string
			if err := rows.Scan(&ref, &mid); err != nil {
				rows.Close()
				return nil, fmt.Errorf("messages by provider ref: %w", err)
			}
			out[ref] = mid
		}
		rows.Close()
	}
	return out, nil
}

// UpdateMessages writes many messages' mutable fields in one statement per
// chunk (UPDATE … FROM VALUES): on PostgreSQL a statement per message
// would cost a network round trip each.
func (tx *Tx) UpdateMessages(ctx context.Context, msgs []Message) error {
	const cols = 20
	for start := 0; start < len(msgs); start += 200 {
		chunk := msgs[start:min(start+200, len(msgs))]
		var b strings.Builder
		b.WriteString(`UPDATE messages SET status = v.column2, channel = v.column3, provider = v.column4,
			provider_ref = v.column5, error_code = v.column6, error_message = v.column7, updated_at = v.column8,
			sent_at = v.column9, delivered_at = v.column10, read_at = v.column11, failed_at = v.column12,
			canceled_at = v.column13, next_attempt_at = v.column14, lease_owner = v.column15, charged = v.column16,
			credits = v.column17, segments = v.column18, encoding = v.column19, attempts = v.column20 FROM (VALUES `)
		args := make([]any, 0, len(chunk)*cols)
		for i, m := range chunk {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(tx.s.updateRow(i * cols))
			args = append(args, m.ID, m.Status, m.Channel, m.Provider, m.ProviderRef, m.ErrorCode, m.ErrorMessage,
				ms(m.UpdatedAt), nullMS(m.SentAt), nullMS(m.DeliveredAt), nullMS(m.ReadAt), nullMS(m.FailedAt),
				nullMS(m.CanceledAt), nullMS(m.NextAttemptAt), m.LeaseOwner, m.Charged, m.Credits, m.Segments,
				m.Encoding, m.Attempts)
		}
		b.WriteString(`) AS v WHERE messages.id = v.column1`)
		if _, err := tx.exec(ctx, b.String(), args...); err != nil {
			return fmt.Errorf("update messages: %w", err)
		}
	}
	return nil
}

// updateRow is one VALUES row of UpdateMessages. PostgreSQL types the
// parameters of a VALUES list as text unless told, hence the casts.
func (s *Store) updateRow(from int) string {
	key := [2]int{-1, from}
	if v, ok := s.phs.Load(key); ok {
		return v.(string)
	}
	types := []string{"TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "BIGINT", "BIGINT", "BIGINT", "BIGINT",
		"BIGINT", "BIGINT", "BIGINT", "TEXT", "BIGINT", "BIGINT", "INTEGER", "TEXT", "INTEGER"}
	var b strings.Builder
	b.WriteByte('(')
	for i, t := range types {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "CAST($%d AS %s)", from+i+1, t)
	}
	b.WriteByte(')')
	v := b.String()
	s.phs.Store(key, v)
	return v
}

// CancelableMessageIDs lists a campaign's messages that still wait for
// dispatch.
func (s *Store) CancelableMessageIDs(ctx context.Context, campaignID string) ([]string, error) {
	rows, err := s.rquery(ctx, `SELECT id FROM messages WHERE campaign_id = $1 AND status = 'SENDING' ORDER BY id`, campaignID)
	if err != nil {
		return nil, fmt.Errorf("cancelable messages: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("cancelable messages: %w", err)
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// ExpiredMessageIDs lists open messages whose validity has run out.
func (s *Store) ExpiredMessageIDs(ctx context.Context, now time.Time, limit int) ([]string, error) {
	return s.ids(ctx, `SELECT id FROM messages WHERE status IN ('SENDING', 'SENT') AND expires_at <= $1 LIMIT $2`, ms(now), limit)
}

// StaleMessages lists a provider's messages still awaiting a report (SENT,
// or DELIVERED on a channel with read receipts) whose last
// change is older than before: the simulator re-reads them after a restart
// to finish their story.
// Numbers ending in skipSuffix are left out (the simulator's "never
// answers" numbers would otherwise fill every page).
func (s *Store) StaleMessages(ctx context.Context, provider string, before time.Time, skipSuffix string, limit int) ([]Message, error) {
	// An empty suffix skips nothing; as a pattern ("%") it would skip all.
	skip, args := "", []any{provider, ms(before), limit}
	if skipSuffix != "" {
		skip, args = ` AND to_phone NOT LIKE $4`, append(args, "%"+skipSuffix)
	}
	return scanMessages(s.rquery(ctx, `SELECT `+messageCols+` FROM messages
		WHERE (status = 'SENT' OR (status = 'DELIVERED' AND channel <> 'SMS')) AND provider = $1 AND updated_at < $2`+skip+`
		ORDER BY updated_at LIMIT $3`, args...))
}

// LatestMessageTo finds the newest message an account sent to a phone in an
// environment since a time: replies are routed to its campaign.
func (s *Store) LatestMessageTo(ctx context.Context, accountID, env, phone string, since time.Time) (Message, error) {
	return scanMessage(s.rqueryRow(ctx, `SELECT `+messageCols+` FROM messages WHERE account_id = $1 AND to_phone = $2
		AND env = $3 AND created_at >= $4 ORDER BY id DESC LIMIT 1`, accountID, phone, env, ms(since)))
}

func (s *Store) ids(ctx context.Context, query string, args ...any) ([]string, error) {
	rows, err := s.rquery(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("query ids: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("scan id: %w", err)
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// MessageByID reads a message whatever its account (internal callers only).
func (s *Store) MessageByID(ctx context.Context, messageID string) (Message, error) {
	return scanMessage(s.rqueryRow(ctx, `SELECT `+messageCols+` FROM messages WHERE id = $1`, messageID))
}
