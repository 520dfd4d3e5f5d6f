package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"math/bits"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

var campaigns = newTable("campaigns", func(ca *domain.Campaign, c cols) cols {
	return c.add(textCol("id", &ca.ID), textCol("account_id", &ca.AccountID), textCol("key_id", &ca.KeyID),
		enumCol("env", &ca.Env), enumCol("type", &ca.Type), textCol("callback_url", &ca.CallbackURL),
		intCol("total", &ca.Total), timeCol("created_at", &ca.CreatedAt))
})

var messages = newTable("messages", func(m *domain.Message, c cols) cols {
	return c.add(textCol("id", &m.ID), textCol("campaign_id", &m.CampaignID), textCol("account_id", &m.AccountID),
		enumCol("env", &m.Env), textCol("to_phone", &m.To), textCol("country_code", &m.CountryCode),
		textCol("from_addr", &m.From), enumCol("type", &m.Type), enumCol("channel", &m.Channel),
		textCol("body", &m.Body), contentCol("content", &m.Content), enumCol("status", &m.Status),
		intCol("segments", &m.Segments), textCol("encoding", &m.Encoding), int64Col("credits", &m.Credits),
		int64Col("charged", &m.Charged), textCol("provider", &m.Provider), textCol("provider_ref", &m.ProviderRef),
		textCol("route", &m.Route), int64Col("cost", &m.Cost), textCol("cost_currency", &m.CostCurrency),
		textCol("error_code", &m.ErrorCode), textCol("error_message", &m.ErrorMessage),
		textCol("reference", &m.Reference), textCol("callback_url", &m.CallbackURL),
		timeCol("created_at", &m.CreatedAt), timeCol("updated_at", &m.UpdatedAt), timeCol("sent_at", &m.SentAt),
		timeCol("delivered_at", &m.DeliveredAt), timeCol("read_at", &m.ReadAt), timeCol("failed_at", &m.FailedAt),
		timeCol("canceled_at", &m.CanceledAt), timeCol("scheduled_at", &m.ScheduledAt),
		timeCol("expires_at", &m.ExpiresAt), timeCol("next_attempt_at", &m.NextAttemptAt),
		textCol("lease_owner", &m.LeaseOwner), intCol("attempts", &m.Attempts),
		uplineCol("upline", &m.Upline), boolCol("bill_delivery", &m.BillDelivery),
		decisionCol("fraud", &m.Fraud), timeCol("held_at", &m.HeldAt))
}).withDefaults("fraud", "held_at", "upline", "bill_delivery", "from_addr", "content", "provider", "provider_ref", "route", "cost", "cost_currency",
	"error_code", "error_message", "reference", "callback_url", "sent_at", "delivered_at", "read_at", "failed_at",
	"canceled_at", "scheduled_at", "next_attempt_at", "lease_owner", "attempts")

// messageCols is the column list of every message read.
var messageCols = messages.list

// InsertCampaign writes a campaign, in the caller's transaction.
func (tx *Tx) InsertCampaign(ctx context.Context, c domain.Campaign) error {
	if _, err := tx.exec(ctx, `INSERT INTO campaigns (`+campaigns.list+`) VALUES (`+tx.s.placeholders(1, len(campaigns.names))+`)`,
		campaigns.args(&c, nil)...); err != nil {
		return fmt.Errorf("insert campaign: %w", err)
	}
	return nil
}

// InsertCampaigns writes campaigns in as few statements as possible, in
// the caller's transaction.
func (tx *Tx) InsertCampaigns(ctx context.Context, cs []domain.Campaign) error {
	return insertRows(ctx, tx, campaigns, cs, 256, "", true, "campaigns")
}

// ForgetIdempotency drops a key's remembered response, in the caller's
// transaction.
func (tx *Tx) ForgetIdempotency(ctx context.Context, keyID, key string) error {
	if _, err := tx.exec(ctx, `DELETE FROM idempotency_keys WHERE key_id = $1 AND idem_key = $2`, keyID, key); err != nil {
		return fmt.Errorf("forget idempotency key: %w", err)
	}
	return nil
}

// ClaimIdempotency inserts the key's row, or returns the existing one
// (fresh false). On PostgreSQL a concurrent insert of the same key waits
// for the first transaction, so two racing requests never both send.
func (tx *Tx) ClaimIdempotency(ctx context.Context, in domain.Idempotency) (domain.Idempotency, bool, error) {
	res, err := tx.exec(ctx, `INSERT INTO idempotency_keys (key_id, idem_key, request_hash, status_code, response, created_at)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (key_id, idem_key) DO NOTHING`,
		in.KeyID, in.Key, in.RequestHash, in.StatusCode, string(in.Response), ms(in.CreatedAt))
	if err != nil {
		return domain.Idempotency{}, false, fmt.Errorf("insert idempotency key: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return in, true, nil
	}
	prev, err := idempotency(ctx, tx.queryRow, in.KeyID, in.Key)
	return prev, false, err
}

func idempotency(ctx context.Context, queryRow func(context.Context, string, ...any) rowScanner, keyID, key string) (domain.Idempotency, error) {
	var out domain.Idempotency
	var resp string
	var at int64
	err := queryRow(ctx, `SELECT key_id, idem_key, request_hash, status_code, response, created_at
		FROM idempotency_keys WHERE key_id = $1 AND idem_key = $2`, keyID, key).
		Scan(&out.KeyID, &out.Key, &out.RequestHash, &out.StatusCode, &resp, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return out, domain.ErrNotFound
	}
	if err != nil {
		return out, fmt.Errorf("read idempotency key: %w", err)
	}
	out.Response, out.CreatedAt = []byte(resp), time.UnixMilli(at).UTC()
	return out, nil
}

// Idempotency reads a remembered response.
func (s *Store) Idempotency(ctx context.Context, keyID, key string) (domain.Idempotency, error) {
	return idempotency(ctx, s.rqueryRow, keyID, key)
}

// SaveIdempotency remembers a response outside a send (cancel, upload, …).
// The first writer wins; a concurrent duplicate is dropped.
func (s *Store) SaveIdempotency(ctx context.Context, in domain.Idempotency) error {
	return s.run(ctx, "save idempotency key", `INSERT INTO idempotency_keys (key_id, idem_key, request_hash, status_code, response, created_at)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (key_id, idem_key) DO NOTHING`,
		in.KeyID, in.Key, in.RequestHash, in.StatusCode, string(in.Response), ms(in.CreatedAt))
}

// DeleteIdempotencyBefore drops remembered responses older than t.
func (s *Store) DeleteIdempotencyBefore(ctx context.Context, t time.Time) (int64, error) {
	res, err := s.wexec(ctx, `DELETE FROM idempotency_keys WHERE created_at < $1`, ms(t))
	if err != nil {
		return 0, fmt.Errorf("delete idempotency keys: %w", err)
	}
	return res.RowsAffected()
}

// InsertMessages writes messages, in the caller's transaction.
func (tx *Tx) InsertMessages(ctx context.Context, msgs []domain.Message) error {
	if err := tx.meetHours(ctx, msgs); err != nil {
		return err
	}
	// 256 × 34 parameters stays under SQLite's 32766.
	return insertRows(ctx, tx, messages, msgs, 256, "", true, "messages")
}

// Message reads one message of an account's environment; another
// account's or environment's id is ErrNotFound.
func (s *Store) Message(ctx context.Context, accountID string, env domain.Environment, messageID string) (domain.Message, error) {
	return messages.scan(s.rqueryRow(ctx, `SELECT `+messageCols+` FROM messages WHERE id = $1 AND account_id = $2 AND env = $3`,
		messageID, accountID, env))
}

// Campaign reads one campaign of an account's environment; another
// account's or environment's id is ErrNotFound. A one-recipient send has
// no campaigns row: its campaign is named after its message (id.Derive)
// and is read from that message, which must name it back, so that an id
// made up from some other message's finds nothing.
func (s *Store) Campaign(ctx context.Context, accountID string, env domain.Environment, campaignID string) (domain.Campaign, error) {
	return campaigns.scan(s.rqueryRow(ctx, `SELECT `+campaigns.list+` FROM campaigns WHERE id = $1 AND account_id = $2 AND env = $3
		UNION ALL
		SELECT campaign_id, account_id, '', env, type, callback_url, 1, created_at FROM messages
		WHERE id = $4 AND campaign_id = $5 AND account_id = $6 AND env = $7`,
		campaignID, accountID, env, id.Derive(id.Message, campaignID), campaignID, accountID, env))
}

// CampaignCounts counts a campaign's messages per status.
func (s *Store) CampaignCounts(ctx context.Context, campaignID string) (map[domain.Status]int, error) {
	out := map[domain.Status]int{}
	var st domain.Status
	var n int
	err := rowsOf(s.rquery(ctx, `SELECT status, COUNT(*) FROM messages WHERE campaign_id = $1 GROUP BY status`, campaignID)).scan(
		[]any{&st, &n}, func() { out[st] = n })
	if err != nil {
		return nil, fmt.Errorf("campaign counts: %w", err)
	}
	return out, nil
}

// CampaignMessages pages through a campaign's messages in id order, after
// the given id.
func (s *Store) CampaignMessages(ctx context.Context, campaignID, after string, limit int) ([]domain.Message, error) {
	return messages.scanAll(s.rquery(ctx, `SELECT `+messageCols+` FROM messages
		WHERE campaign_id = $1 AND id > $2 ORDER BY id LIMIT $3`, campaignID, after, limit))
}

// SearchMessages lists an account's messages, newest first (in write
// order), at most Limit (1 to 1001, else 100).
func (s *Store) SearchMessages(ctx context.Context, f domain.MessageFilter) ([]domain.Message, error) {
	query, args := messageFilter(`SELECT `+messageCols+` FROM messages WHERE account_id = $1`, []any{f.AccountID}, f)
	if f.Before != "" {
		args = append(args, f.Before)
		query += fmt.Sprintf(" AND %s < (SELECT %s FROM messages WHERE id = $%d)", s.seq(), s.seq(), len(args))
	}
	args = append(args, searchLimit(f.Limit))
	query += fmt.Sprintf(" ORDER BY %s DESC LIMIT $%d", s.seq(), len(args))
	return messages.scanAll(s.rquery(ctx, query, args...))
}

// messageFilter adds f's conditions but the account and the cursor to a
// query whose WHERE clause has begun.
func messageFilter(query string, args []any, f domain.MessageFilter) (string, []any) {
	add := func(cond string, v any) {
		args = append(args, v)
		query += fmt.Sprintf(" AND "+cond, len(args))
	}
	if f.Phone != "" {
		add("to_phone = $%d", f.Phone)
	}
	if f.Env != "" {
		add("env = $%d", string(f.Env))
	}
	if f.Status != "" {
		add("status = $%d", string(f.Status))
	}
	if f.CampaignID != "" {
		add("campaign_id = $%d", f.CampaignID)
	}
	if f.Reference != "" {
		add("reference = $%d", f.Reference)
	}
	if !f.From.IsZero() {
		add("created_at >= $%d", ms(f.From))
	}
	if !f.To.IsZero() {
		add("created_at < $%d", ms(f.To))
	}
	return query, args
}

// searchLimit bounds a search's page: 1001 is one more than the largest
// page, which tells whether another page follows.
func searchLimit(n int) int {
	if n <= 0 || n > 1001 {
		return 100
	}
	return n
}

// ClaimDue leases up to limit messages that are due for dispatch (see
// claimDue), counting an attempt for each. The messages of a suspended
// account are held: left due, unclaimed and uncounted, so that they go
// out once it is resumed; except those whose validity has ended, which
// the dispatcher expires as it would have without the suspension.
func (s *Store) ClaimDue(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]domain.Message, error) {
	return claimDue(ctx, s, messages, ", attempts = attempts + 1", notHeld, owner, now, lease, limit)
}

// notHeld leaves out of a claim the messages of suspended accounts whose
// validity still runs ($3 is the claim's now).
const notHeld = ` AND (expires_at <= $3 OR NOT EXISTS (SELECT 1 FROM accounts a
	WHERE a.id = messages.account_id AND a.suspended_at <> 0))`

// ReleaseMessages gives up an owner's lease on messages it cannot hand
// over now (they were written leased to it), making them due at once for
// any node's claim.
func (s *Store) ReleaseMessages(ctx context.Context, owner string, ids []string, now time.Time) error {
	return s.releaseLeases(ctx, "messages", "next_attempt_at IS NOT NULL", owner, ids, now)
}

// RenewMessages extends to now+lease the lease owner holds on messages it
// is still handing over, so a slow hand-over does not outlive its lease
// and let another claim (on this node or another) take them too. held
// maps each message id to the end of the lease as the owner last knew it
// (its next_attempt_at): a row renews only while that is unchanged, since
// a claim after the lease lapsed moves it even when the claimer has the
// same owner name. It returns the ids renewed; the others are no longer
// the caller's to hand over.
func (s *Store) RenewMessages(ctx context.Context, owner string, held map[string]time.Time, now time.Time, lease time.Duration) ([]string, error) {
	if len(held) == 0 {
		return nil, nil
	}
	ids := make([]string, 0, len(held))
	for id := range held {
		ids = append(ids, id)
	}
	sort.Strings(ids) // a fixed lock order, as LockMessages
	var out []string
	err := s.Write(ctx, func(tx *Tx) error {
		out = out[:0]
		for start := 0; start < len(ids); start += 256 {
			chunk := ids[start:min(start+256, len(ids))]
			// Padded to a power of two with its last pair, so the
			// statement has a few shapes (see pieces).
			size := 1
			for size < len(chunk) {
				size *= 2
			}
			args := make([]any, 0, 2+2*size)
			args = append(args, owner, ms(now.Add(lease)))
			var b strings.Builder
			for i := range size {
				if i > 0 {
					b.WriteString(" OR ")
				}
				id := chunk[min(i, len(chunk)-1)]
				fmt.Fprintf(&b, "(id = $%d AND next_attempt_at = $%d)", len(args)+1, len(args)+2)
				args = append(args, id, ms(held[id]))
			}
			var renewed string
			err := rowsOf(tx.query(ctx, `UPDATE messages SET next_attempt_at = $2
				WHERE lease_owner = $1 AND (`+b.String()+`) RETURNING id`, args...)).scan(
				[]any{&renewed}, func() { out = append(out, renewed) })
			if err != nil {
				return fmt.Errorf("renew message leases: %w", err)
			}
		}
		return nil
	})
	return out, err
}

// LockMessages reads messages for an update in this transaction, in id
// order (a fixed lock order keeps concurrent batches free of deadlocks).
func (tx *Tx) LockMessages(ctx context.Context, ids []string) (map[string]domain.Message, error) {
	out := make(map[string]domain.Message, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	sorted := append([]string(nil), ids...)
	sort.Strings(sorted)
	lock := ""
	if tx.s.dialect == Postgres {
		lock = " ORDER BY id FOR UPDATE"
	}
	for start := 0; start < len(sorted); start += 512 {
		chunk := sorted[start:min(start+512, len(sorted))]
		// The list is padded to a power of two with its last id, so the
		// statement has a few shapes (see pieces).
		size := 1
		for size < len(chunk) {
			size *= 2
		}
		args := make([]any, size)
		for i := range args {
			args[i] = chunk[min(i, len(chunk)-1)]
		}
		rows, err := tx.query(ctx, `SELECT `+messageCols+` FROM messages WHERE id IN (`+
			tx.s.placeholders(1, size)+`)`+lock, args...)
		if err := messages.scanEach(rows, err, func(m domain.Message) { out[m.ID] = m }); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// MessageIDsByProviderRef maps provider references (e.g. SMPP message ids)
// to message ids.
func (tx *Tx) MessageIDsByProviderRef(ctx context.Context, provider string, refs []string) (map[string]string, error) {
	out := make(map[string]string, len(refs))
	err := inChunks(refs, func(chunk []any) error {
		// provider_ref <> '' repeats the predicate of the partial index
		// messages_provider_ref, without which the index is not used.
		var ref, mid string
		err := rowsOf(tx.query(ctx, `SELECT provider_ref, id FROM messages WHERE provider = $1 AND provider_ref <> ''
			AND provider_ref IN (`+tx.s.placeholders(2, len(chunk))+`)`, append([]any{provider}, chunk...)...)).scan(
			[]any{&ref, &mid}, func() { out[ref] = mid })
		if err != nil {
			return fmt.Errorf("messages by provider ref: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// mutableCols are the columns of a message that its changes write: each
// with the type PostgreSQL needs told for a VALUES list (it types
// parameters there as text), its value as stored, and whether two states
// of a message store the same there. A status change compares every
// column of each message it touches and writes a few, so the comparison
// reads the fields themselves rather than making each stored value twice.
var mutableCols = [...]mutableCol{
	mutText("status", func(m *domain.Message) string { return string(m.Status) }),
	mutText("channel", func(m *domain.Message) string { return string(m.Channel) }),
	mutText("provider", func(m *domain.Message) string { return m.Provider }),
	mutText("provider_ref", func(m *domain.Message) string { return m.ProviderRef }),
	mutText("error_code", func(m *domain.Message) string { return m.ErrorCode }),
	mutText("error_message", func(m *domain.Message) string { return m.ErrorMessage }),
	{"updated_at", "BIGINT", func(m *domain.Message) any { return ms(m.UpdatedAt) },
		func(a, b *domain.Message) bool { return ms(a.UpdatedAt) == ms(b.UpdatedAt) }},
	mutStamp("sent_at", func(m *domain.Message) time.Time { return m.SentAt }),
	mutStamp("delivered_at", func(m *domain.Message) time.Time { return m.DeliveredAt }),
	mutStamp("read_at", func(m *domain.Message) time.Time { return m.ReadAt }),
	mutStamp("failed_at", func(m *domain.Message) time.Time { return m.FailedAt }),
	mutStamp("canceled_at", func(m *domain.Message) time.Time { return m.CanceledAt }),
	mutStamp("next_attempt_at", func(m *domain.Message) time.Time { return m.NextAttemptAt }),
	mutText("lease_owner", func(m *domain.Message) string { return m.LeaseOwner }),
	mutInt64("charged", func(m *domain.Message) int64 { return m.Charged }),
	mutInt64("credits", func(m *domain.Message) int64 { return m.Credits }),
	{"segments", "INTEGER", func(m *domain.Message) any { return m.Segments },
		func(a, b *domain.Message) bool { return a.Segments == b.Segments }},
	mutText("encoding", func(m *domain.Message) string { return m.Encoding }),
	{"attempts", "INTEGER", func(m *domain.Message) any { return m.Attempts },
		func(a, b *domain.Message) bool { return a.Attempts == b.Attempts }},
	mutText("route", func(m *domain.Message) string { return m.Route }),
	mutInt64("cost", func(m *domain.Message) int64 { return m.Cost }),
	mutText("cost_currency", func(m *domain.Message) string { return m.CostCurrency }),
	// Equal levels encode alike, so comparing them spares two encodings.
	{"upline", "TEXT", func(m *domain.Message) any { return encodeUpline(m.Upline) },
		func(a, b *domain.Message) bool { return slices.Equal(a.Upline, b.Upline) }},
	// A decision is compared by value and encoded only when written: a
	// status change rarely touches it, and its JSON costs more than the
	// rest of the row's values together.
	{"fraud", "TEXT", func(m *domain.Message) any { return encodeDecision(m.Fraud) },
		func(a, b *domain.Message) bool { return decisionValueOf(a.Fraud) == decisionValueOf(b.Fraud) }},
}

// mutableCol is one column of mutableCols.
type mutableCol struct {
	name, typ string
	value     func(m *domain.Message) any // as written
	same      func(a, b *domain.Message) bool
}

func mutText(name string, f func(m *domain.Message) string) mutableCol {
	return mutableCol{name, "TEXT", func(m *domain.Message) any { return f(m) },
		func(a, b *domain.Message) bool { return f(a) == f(b) }}
}

func mutInt64(name string, f func(m *domain.Message) int64) mutableCol {
	return mutableCol{name, "BIGINT", func(m *domain.Message) any { return f(m) },
		func(a, b *domain.Message) bool { return f(a) == f(b) }}
}

// mutStamp is a time stored as Unix milliseconds, NULL for the zero time.
func mutStamp(name string, f func(m *domain.Message) time.Time) mutableCol {
	return mutableCol{name, "BIGINT", func(m *domain.Message) any { return nullMS(f(m)) },
		func(a, b *domain.Message) bool { return nullMS(f(a)) == nullMS(f(b)) }}
}

// decisionValue is a message's decision as compared between its states.
type decisionValue struct {
	set bool
	d   domain.FraudDecision
}

func decisionValueOf(d *domain.FraudDecision) decisionValue {
	if d == nil {
		return decisionValue{}
	}
	return decisionValue{true, *d}
}

// UpdateMessages writes every mutable field of many messages.
func (tx *Tx) UpdateMessages(ctx context.Context, msgs []domain.Message) error {
	return tx.UpdateChangedMessages(ctx, nil, msgs)
}

// UpdateChangedMessages writes, of each message of after, the mutable
// fields that differ from its state in before (read in this transaction,
// so that nothing else changed it meanwhile; nil before writes them all).
// A status change sets few fields, and writing only those lets SQLite
// leave alone every index on a column the change did not touch (it
// decides by the SET list, not by the values), and binds a few parameters
// per message instead of all. Messages with the same set of changed
// fields share one UPDATE … FROM VALUES per chunk: on PostgreSQL a
// statement per message would cost a network round trip each.
func (tx *Tx) UpdateChangedMessages(ctx context.Context, before, after []domain.Message) error {
	type group struct {
		mask uint32
		rows []int
	}
	var groups []group
	for i := range after {
		mask := uint32(1)<<len(mutableCols) - 1
		if before != nil {
			mask = 0
			for c := range mutableCols {
				if !mutableCols[c].same(&before[i], &after[i]) {
					mask |= 1 << c
				}
			}
		}
		if mask == 0 {
			continue
		}
		g := slices.IndexFunc(groups, func(g group) bool { return g.mask == mask })
		if g < 0 {
			groups = append(groups, group{mask: mask})
			g = len(groups) - 1
		}
		groups[g].rows = append(groups[g].rows, i)
	}
	for _, g := range groups {
		n := 1 + bits.OnesCount32(g.mask)
		name := "update messages " + strconv.FormatUint(uint64(g.mask), 16)
		for _, pc := range pieces(len(g.rows), 128) {
			rows := g.rows[pc[0]:pc[1]]
			query := tx.s.shape(name, len(rows), func() string { return updateChangedSQL(tx.s.multiWrite("UPDATE"), g.mask, len(rows)) })
			args := make([]any, 0, len(rows)*n)
			for _, i := range rows {
				args = append(args, after[i].ID)
				for c := range mutableCols {
					if g.mask&(1<<c) != 0 {
						args = append(args, mutableCols[c].value(&after[i]))
					}
				}
			}
			if err := tx.execLater(ctx, query, args...); err != nil {
				return fmt.Errorf("update messages: %w", err)
			}
		}
	}
	return nil
}

// updateChangedSQL is the UPDATE of rows messages' columns in mask.
func updateChangedSQL(verb string, mask uint32, rows int) string {
	var b strings.Builder
	b.WriteString(verb + " messages SET ")
	k := 2
	for c, col := range mutableCols {
		if mask&(1<<c) == 0 {
			continue
		}
		if k > 2 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s = v.column%d", col.name, k)
		k++
	}
	b.WriteString(" FROM (VALUES ")
	n := 1 + bits.OnesCount32(mask)
	for r := 0; r < rows; r++ {
		if r > 0 {
			b.WriteString(", ")
		}
		p := r*n + 1
		fmt.Fprintf(&b, "(CAST($%d AS TEXT)", p)
		for c, col := range mutableCols {
			if mask&(1<<c) != 0 {
				p++
				fmt.Fprintf(&b, ", CAST($%d AS %s)", p, col.typ)
			}
		}
		b.WriteByte(')')
	}
	b.WriteString(") AS v WHERE messages.id = v.column1")
	return b.String()
}

// CancelableMessageIDs lists a campaign's messages that still wait for
// dispatch, or for an operator's decision on a hold.
func (s *Store) CancelableMessageIDs(ctx context.Context, campaignID string) ([]string, error) {
	ids, err := s.ids(ctx, `SELECT id FROM messages WHERE campaign_id = $1 AND status IN ($2, $3) ORDER BY id`, campaignID,
		string(domain.Sending), string(domain.Held))
	if err != nil {
		return nil, fmt.Errorf("cancelable messages: %w", err)
	}
	return ids, nil
}

// ExpiredMessageIDs lists open messages whose validity has run out.
func (s *Store) ExpiredMessageIDs(ctx context.Context, now time.Time, limit int) ([]string, error) {
	// The literals repeat the predicate of the partial index messages_open.
	return s.ids(ctx, `SELECT id FROM messages WHERE status IN (`+lit(domain.Sending)+`, `+lit(domain.Sent)+`)
		AND expires_at <= $1 LIMIT $2`, ms(now), limit)
}

// StaleMessages lists a provider's messages still awaiting a report (SENT,
// or DELIVERED on a channel with read receipts) whose last
// change is older than before: the simulator re-reads them after a restart
// to finish their story.
// Numbers ending in skipSuffix are left out (the simulator's "never
// answers" numbers would otherwise fill every page).
func (s *Store) StaleMessages(ctx context.Context, provider string, before time.Time, skipSuffix string, limit int) ([]domain.Message, error) {
	// An empty suffix skips nothing; as a pattern ("%") it would skip all.
	skip, args := "", []any{provider, ms(before), limit}
	if skipSuffix != "" {
		skip, args = ` AND to_phone NOT LIKE $4`, append(args, "%"+skipSuffix)
	}
	return messages.scanAll(s.rquery(ctx, `SELECT `+messageCols+` FROM messages WHERE `+sentOpen+`
		AND provider = $1 AND updated_at < $2`+skip+` ORDER BY updated_at LIMIT $3`, args...))
}

// sentOpen is the predicate of the partial index messages_sent_open (the
// messages a provider may still report on); a query repeats it word for
// word so that the planner uses the index.
var sentOpen = `(status = ` + lit(domain.Sent) + ` OR (status = ` + lit(domain.Delivered) + ` AND channel <> ` + lit(domain.SMS) + `))`

// AwaitingReport lists a provider's SMS messages still SENT whose last
// change lies in [since, before), oldest first, starting after the message
// last changed at afterAt with id afterID (a page's end; zero for the
// first page).
func (s *Store) AwaitingReport(ctx context.Context, provider string, since, before time.Time, afterAt time.Time, afterID string, limit int) ([]domain.Message, error) {
	return messages.scanAll(s.rquery(ctx, `SELECT `+messageCols+` FROM messages WHERE `+sentOpen+`
		AND provider = $1 AND updated_at < $2 AND status = `+lit(domain.Sent)+` AND channel = `+lit(domain.SMS)+`
		AND updated_at >= $3 AND (updated_at > $4 OR (updated_at = $4 AND id > $5))
		ORDER BY updated_at, id LIMIT $6`, provider, ms(before), ms(since), ms(afterAt), afterID, limit))
}

// LatestMessageTo finds the newest message an account sent to a phone in an
// environment since a time: replies are routed to its campaign.
func (s *Store) LatestMessageTo(ctx context.Context, accountID string, env domain.Environment, phone string, since time.Time) (domain.Message, error) {
	return messages.scan(s.rqueryRow(ctx, `SELECT `+messageCols+` FROM messages WHERE account_id = $1 AND to_phone = $2
		AND env = $3 AND created_at >= $4 ORDER BY `+s.seq()+` DESC LIMIT 1`, accountID, phone, string(env), ms(since)))
}

// LatestMessageVia finds the newest live message any account sent to a
// phone through a provider since a time: a provider's inbound message that
// names no account belongs to that message's account.
func (s *Store) LatestMessageVia(ctx context.Context, provider, phone string, since time.Time) (domain.Message, error) {
	return messages.scan(s.rqueryRow(ctx, `SELECT `+messageCols+` FROM messages WHERE to_phone = $1 AND provider = $2
		AND env = $3 AND created_at >= $4 ORDER BY `+s.seq()+` DESC LIMIT 1`, phone, provider, domain.Live, ms(since)))
}

func (s *Store) ids(ctx context.Context, query string, args ...any) ([]string, error) {
	var out []string
	var v string
	if err := rowsOf(s.rquery(ctx, query, args...)).scan([]any{&v}, func() { out = append(out, v) }); err != nil {
		return nil, fmt.Errorf("query ids: %w", err)
	}
	return out, nil
}

// MessageByID reads a message whatever its account (internal callers only).
func (s *Store) MessageByID(ctx context.Context, messageID string) (domain.Message, error) {
	return messages.scan(s.rqueryRow(ctx, `SELECT `+messageCols+` FROM messages WHERE id = $1`, messageID))
}

// ReleaseLeases hands back everything owner holds: messages it claimed and
// did not hand over, and events leased to it and not delivered, due at
// once. A node calls it when it stops, and when it starts with the
// identity of a run that died, so that its work moves on at once instead
// of waiting for the leases to run out.
func (s *Store) ReleaseLeases(ctx context.Context, owner string, now time.Time) (messagesReleased, eventsReleased int64, err error) {
	err = s.Write(ctx, func(tx *Tx) error {
		res, err := tx.exec(ctx, `UPDATE messages SET lease_owner = '', next_attempt_at = $2
			WHERE lease_owner = $1 AND next_attempt_at IS NOT NULL`, owner, ms(now))
		if err != nil {
			return fmt.Errorf("release messages: %w", err)
		}
		messagesReleased, _ = res.RowsAffected()
		res, err = tx.exec(ctx, `UPDATE webhook_events SET lease_owner = '', next_attempt_at = $2
			WHERE lease_owner = $1 AND state = $3`, owner, ms(now), domain.EventPending)
		if err != nil {
			return fmt.Errorf("release events: %w", err)
		}
		eventsReleased, _ = res.RowsAffected()
		return nil
	})
	return messagesReleased, eventsReleased, err
}
