package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/jsontext"
)

// fraudSep parts an account's own fraud settings from the operator's
// default rules in the one column an account read carries them in (JSON
// never holds a raw tab).
const fraudSep = "\t"

// fraudSelect is what an account read selects for its fraud column: its
// own settings and the defaults, so the key cache keeps both.
func (s *Store) fraudSelect(alias string) string {
	tab := "char(9)"
	if s.dialect == Postgres {
		tab = "chr(9)"
	}
	return alias + ".fraud || " + tab + " || COALESCE((SELECT rules FROM fraud_defaults WHERE id = 1), '')"
}

func fraudCol(name string, a *domain.Account) field { return field{name, (*fraudText)(a)} }

type fraudText domain.Account

func (a *fraudText) arg() any {
	if a.Fraud.IsZero() {
		return ""
	}
	return jsonText(a.Fraud)
}
func (a *fraudText) dest() any { return a }

// Scan reads the account's settings and, when the read joined them, the
// defaults. Text that does not parse reads as none: a send must not fail
// for it, and the operator's page shows what is stored.
func (a *fraudText) Scan(src any) error {
	return scanNull(src, func(v sql.NullString) {
		own, defaults, _ := strings.Cut(v.String, fraudSep)
		a.Fraud, a.FraudDefaults = domain.FraudSettings{}, domain.FraudRules{}
		if own != "" {
			_ = json.Unmarshal([]byte(own), &a.Fraud)
		}
		if defaults != "" {
			_ = json.Unmarshal([]byte(defaults), &a.FraudDefaults)
		}
	})
}

func decisionCol(name string, p **domain.FraudDecision) field { return field{name, decisionText{p}} }

type decisionText struct{ p **domain.FraudDecision }

func (d decisionText) arg() any  { return encodeDecision(*d.p) }
func (d decisionText) dest() any { return d }

func (d decisionText) Scan(src any) error {
	var err error
	scanErr := scanNull(src, func(v sql.NullString) {
		*d.p = nil
		if v.String != "" {
			*d.p, err = decodeDecision(v.String)
		}
	})
	if scanErr != nil {
		return scanErr
	}
	return err
}

// decodeDecision reads a stored decision. A status change reads the
// decision of every message it touches, and encoding/json cost several
// microseconds a message, so the text encodeDecision writes (an object
// of known fields, strings without escapes, numbers) is read by hand;
// anything else is left to encoding/json, which reads it the same way.
func decodeDecision(text string) (*domain.FraudDecision, error) {
	if d, ok := decodeDecisionFast(text); ok {
		return d, nil
	}
	var d domain.FraudDecision
	if err := json.Unmarshal([]byte(text), &d); err != nil {
		return nil, err
	}
	return &d, nil
}

func decodeDecisionFast(s string) (*domain.FraudDecision, bool) {
	var d domain.FraudDecision
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return nil, false
	}
	i := 1
	if s[i] == '}' {
		return &d, i == len(s)-1
	}
	for {
		key, n, ok := plainString(s, i)
		if !ok || n >= len(s) || s[n] != ':' {
			return nil, false
		}
		i = n + 1
		var val string
		quoted := i < len(s) && s[i] == '"'
		if quoted {
			val, n, ok = plainString(s, i)
		} else {
			n = i
			for n < len(s) && strings.IndexByte("-+.0123456789eE", s[n]) >= 0 {
				n++
			}
			val = s[i:n]
			ok = jsonNumber(val)
		}
		if !ok || !setDecisionField(&d, key, val, quoted) {
			return nil, false
		}
		i = n
		if i >= len(s) {
			return nil, false
		}
		switch s[i] {
		case ',':
			i++
		case '}':
			return &d, i == len(s)-1
		default:
			return nil, false
		}
	}
}

// jsonNumber tells whether s is a number as JSON writes one (strconv
// also takes "+1", "01" or ".5", which encoding/json refuses).
func jsonNumber(s string) bool {
	i := 0
	digits := func() bool {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i > start
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case !digits():
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	return i == len(s)
}

// plainString reads the JSON string at s[i] when it has no escape and
// no control character, and returns it and where it ends.
func plainString(s string, i int) (string, int, bool) {
	if i >= len(s) || s[i] != '"' {
		return "", 0, false
	}
	for j := i + 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '"':
			return s[i+1 : j], j + 1, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return "", 0, false
		}
	}
	return "", 0, false
}

// setDecisionField sets the decision's field named key, as encoding/json
// would from the value; false for a key or value it does not know.
func setDecisionField(d *domain.FraudDecision, key, val string, quoted bool) bool {
	str := func(p *string) bool { *p = val; return quoted }
	num := func(p *int64) bool {
		n, err := strconv.ParseInt(val, 10, 64)
		*p = n
		return !quoted && err == nil
	}
	float := func(p *float64) bool {
		f, err := strconv.ParseFloat(val, 64)
		*p = f
		return !quoted && err == nil
	}
	when := func(p *time.Time) bool { return quoted && p.UnmarshalText([]byte(val)) == nil }
	switch key {
	case "rule":
		return str(&d.Rule)
	case "scope":
		return str(&d.Scope)
	case "key":
		return str(&d.Key)
	case "count":
		return num(&d.Count)
	case "cap":
		return num(&d.Cap)
	case "baseline":
		return float(&d.Baseline)
	case "factor":
		return float(&d.Factor)
	case "action":
		d.Action = domain.FraudAction(val)
		return quoted
	case "at":
		return when(&d.At)
	case "resolution":
		return str(&d.Resolution)
	case "resolvedBy":
		return str(&d.ResolvedBy)
	case "resolvedAt":
		return when(&d.ResolvedAt)
	}
	return false
}

func encodeDecision(d *domain.FraudDecision) string {
	if d == nil {
		return ""
	}
	if text, ok := encodeDecisionFast(d); ok {
		return text
	}
	return jsonText(d)
}

// encodeDecisionFast writes the decision as encoding/json does, byte for
// byte, when its texts need no escaping, its figures are plain decimals
// and its times fall in years 0–9999; otherwise it declines.
func encodeDecisionFast(d *domain.FraudDecision) (string, bool) {
	b := make([]byte, 0, 192)
	ok := true
	str := func(name, v string) {
		var plain bool
		b, plain = jsontext.AppendString(append(b, name...), v)
		ok = ok && plain
	}
	num := func(name string, v int64) {
		b = append(b, name...)
		b = strconv.AppendInt(b, v, 10)
	}
	float := func(name string, v float64) {
		if v == 0 {
			return
		}
		if a := math.Abs(v); a < 1e-6 || a >= 1e21 || math.IsNaN(v) {
			ok = false
			return
		}
		b = append(b, name...)
		b = strconv.AppendFloat(b, v, 'f', -1, 64)
	}
	when := func(name string, t time.Time) {
		if y := t.Year(); y < 0 || y > 9999 {
			ok = false
			return
		}
		b = append(b, name...)
		b = append(b, '"')
		b = t.AppendFormat(b, time.RFC3339Nano)
		b = append(b, '"')
	}
	str(`{"rule":`, d.Rule)
	str(`,"scope":`, d.Scope)
	str(`,"key":`, d.Key)
	num(`,"count":`, d.Count)
	num(`,"cap":`, d.Cap)
	float(`,"baseline":`, d.Baseline)
	float(`,"factor":`, d.Factor)
	str(`,"action":`, string(d.Action))
	when(`,"at":`, d.At)
	if d.Resolution != "" {
		str(`,"resolution":`, d.Resolution)
	}
	if d.ResolvedBy != "" {
		str(`,"resolvedBy":`, d.ResolvedBy)
	}
	if !d.ResolvedAt.IsZero() {
		when(`,"resolvedAt":`, d.ResolvedAt)
	}
	b = append(b, '}')
	return string(b), ok
}

// FraudDefaults reads the operator's default fraud rules.
func (s *Store) FraudDefaults(ctx context.Context) (domain.FraudRules, error) {
	var text string
	if err := s.rqueryRow(ctx, `SELECT rules FROM fraud_defaults WHERE id = 1`).Scan(&text); err != nil {
		return domain.FraudRules{}, fmt.Errorf("fraud defaults: %w", err)
	}
	var r domain.FraudRules
	if text == "" {
		return r, nil
	}
	if err := json.Unmarshal([]byte(text), &r); err != nil {
		return r, fmt.Errorf("fraud defaults: %w", err)
	}
	return r, nil
}

// SetFraudDefaults replaces the operator's default fraud rules (the auth
// counter moves, so every node reads accounts afresh).
func (s *Store) SetFraudDefaults(ctx context.Context, r domain.FraudRules) error {
	res, err := s.wexec(ctx, `UPDATE fraud_defaults SET rules = $1 WHERE id = 1`, jsonText(r))
	return affectedOne(res, err, "set fraud defaults")
}

// SetAccountFraud replaces an account's own fraud settings.
func (s *Store) SetAccountFraud(ctx context.Context, accountID string, f domain.FraudSettings) error {
	a := domain.Account{Fraud: f}
	res, err := s.wexec(ctx, `UPDATE accounts SET fraud = $2 WHERE id = $1`, accountID, (*fraudText)(&a).arg())
	return affectedOne(res, err, "set account fraud settings")
}

// HeldMessages lists held messages, oldest first, of one account ("":
// all), after the cursor; the next cursor is "" at the end.
func (s *Store) HeldMessages(ctx context.Context, accountID string, limit int, cursor string) ([]domain.Message, string, error) {
	var at int64
	var after string
	if cursor != "" {
		a, id, ok := strings.Cut(cursor, ".")
		n, err := strconv.ParseInt(a, 10, 64)
		if !ok || err != nil {
			return nil, "", fmt.Errorf("held messages cursor: %w", domain.ErrNotFound)
		}
		at, after = n, id
	}
	q := `SELECT ` + messageCols + ` FROM messages WHERE status = 'HELD' AND (created_at > $1 OR (created_at = $1 AND id > $2))`
	args := []any{at, after}
	if accountID != "" {
		q += ` AND account_id = $3`
		args = append(args, accountID)
	}
	q += ` ORDER BY created_at, id LIMIT ` + strconv.Itoa(limit+1)
	msgs, err := messages.scanAll(s.rquery(ctx, q, args...))
	if err != nil {
		return nil, "", fmt.Errorf("held messages: %w", err)
	}
	next := ""
	if len(msgs) > limit {
		msgs = msgs[:limit]
		last := msgs[limit-1]
		next = strconv.FormatInt(ms(last.CreatedAt), 10) + "." + last.ID
	}
	return msgs, next, nil
}

// HeldBefore lists the ids of messages held since before t (the
// sweeper's rejections), at most limit.
func (s *Store) HeldBefore(ctx context.Context, t time.Time, limit int) ([]string, error) {
	return s.ids(ctx, `SELECT id FROM messages WHERE status = 'HELD' AND created_at < $1 ORDER BY created_at, id LIMIT $2`,
		ms(t), limit)
}

// FraudHours reads the fraud guard's decisions by hour, oldest first.
func (s *Store) FraudHours(ctx context.Context, q domain.FraudQuery) ([]domain.FraudHour, error) {
	query := `SELECT hour, account_id, rule, scope, fkey, action, messages FROM fraud_hours WHERE hour >= $1 AND hour < $2`
	args := []any{hourOf(q.From), hourOf(q.To.Add(time.Hour - time.Millisecond))}
	if q.AccountID != "" {
		query += ` AND account_id = $3`
		args = append(args, q.AccountID)
	}
	query += ` ORDER BY hour, account_id, rule, fkey`
	var out []domain.FraudHour
	var h domain.FraudHour
	var hour int64
	var action string
	err := rowsOf(s.rquery(ctx, query, args...)).scan([]any{&hour, &h.AccountID, &h.Rule, &h.Scope, &h.Key, &action, &h.Messages},
		func() {
			h.Hour, h.Action = time.Unix(hour*3600, 0).UTC(), domain.FraudAction(action)
			out = append(out, h)
		})
	if err != nil {
		return nil, fmt.Errorf("fraud hours: %w", err)
	}
	s.addPendingMarks(out)
	return out, nil
}

func hourOf(t time.Time) int64 { return t.Unix() / 3600 }

// SweepFraudCounts deletes the counts of hours before hour (the
// baseline's window is behind them).
func (s *Store) SweepFraudCounts(ctx context.Context, hour int64) (int64, error) {
	res, err := s.wexec(ctx, `DELETE FROM fraud_counts WHERE hour < $1`, hour)
	if err != nil {
		return 0, fmt.Errorf("sweep fraud counts: %w", err)
	}
	return res.RowsAffected()
}

// countKey names a count within a statement's answer: the columns
// parted by tabs, which no id, environment, scope or key holds.
func countKey(c domain.FraudCount) string {
	return c.AccountID + "\t" + string(c.Env) + "\t" + c.Scope + "\t" + c.Key + "\t" + strconv.FormatInt(c.Hour, 10)
}

// countKeySQL is countKey built by the database, so that an upsert's
// answer is one text and a number a row rather than six columns to scan.
func (s *Store) countKeySQL() string {
	tab := "char(9)"
	if s.dialect == Postgres {
		tab = "chr(9)"
	}
	return "account_id || " + tab + " || env || " + tab + " || scope || " + tab + " || fkey || " + tab + " || hour"
}

// AddFraudCounts adds each count's N to its row and returns the totals
// after, in the caller's transaction (fraud.Counters). The counts are
// written in key order, so concurrent groups on PostgreSQL lock shared
// rows in one order; a count's row stays locked until the transaction
// ends, which is what makes three nodes count one limit. On SQLite the
// counts of recipients and ranges are kept in memory instead (see
// fraudmem.go), committed with the transaction.
func (tx *Tx) AddFraudCounts(ctx context.Context, cs []domain.FraudCount) ([]int64, error) {
	if tx.s.fmem == nil {
		return tx.addFraudRows(ctx, cs)
	}
	out := make([]int64, len(cs))
	if len(cs) > 0 && !slices.ContainsFunc(cs, func(c domain.FraudCount) bool { return !memScope(c.Scope) }) {
		// Every count in memory, as the guard's are: no index list.
		if err := tx.addMemCounts(ctx, cs, nil, out); err != nil {
			return nil, err
		}
		return out, nil
	}
	var mem []int
	var rows []domain.FraudCount
	var rowAt []int
	for i, c := range cs {
		if memScope(c.Scope) {
			mem = append(mem, i)
		} else {
			rows, rowAt = append(rows, c), append(rowAt, i)
		}
	}
	if len(mem) > 0 {
		if err := tx.addMemCounts(ctx, cs, mem, out); err != nil {
			return nil, err
		}
	}
	if len(rows) > 0 {
		got, err := tx.addFraudRows(ctx, rows)
		if err != nil {
			return nil, err
		}
		for j, i := range rowAt {
			out[i] = got[j]
		}
	}
	return out, nil
}

// addFraudRows adds counts to their rows (AddFraudCounts).
func (tx *Tx) addFraudRows(ctx context.Context, cs []domain.FraudCount) ([]int64, error) {
	// The keys are built once: the sort compares each many times.
	keys := make([]string, len(cs))
	order := make([]int, len(cs))
	for i, c := range cs {
		keys[i], order[i] = countKey(c), i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(keys[a], keys[b]) })
	got := make(map[string]int64, len(cs))
	for _, pc := range pieces(len(order), 200) {
		chunk := order[pc[0]:pc[1]]
		query := tx.s.shape("add fraud counts", len(chunk), func() string {
			var b strings.Builder
			b.WriteString(`INSERT INTO fraud_counts (account_id, env, scope, fkey, hour, n) VALUES `)
			tx.s.writeValues(&b, len(chunk), 6)
			b.WriteString(` ON CONFLICT (account_id, env, scope, fkey, hour) DO UPDATE SET n = fraud_counts.n + excluded.n
				RETURNING `)
			b.WriteString(tx.s.countKeySQL())
			b.WriteString(`, n`)
			return b.String()
		})
		args := make([]any, 0, len(chunk)*6)
		for _, i := range chunk {
			c := cs[i]
			args = append(args, c.AccountID, string(c.Env), c.Scope, c.Key, c.Hour, c.N)
		}
		var key string
		var n int64
		err := rowsOf(tx.query(ctx, query, args...)).scan([]any{&key, &n}, func() { got[key] = n })
		if err != nil {
			return nil, fmt.Errorf("add fraud counts: %w", err)
		}
	}
	out := make([]int64, len(cs))
	for i := range cs {
		out[i] = got[keys[i]]
	}
	return out, nil
}

// TrailingFraudCounts returns each count's total over the hours
// [Hour-window, Hour), in the caller's transaction (fraud.Counters). On
// SQLite a range's is counted from the messages (its counts are not
// rows): the guard asks only for the ranges busy enough this hour for
// their baseline to matter.
func (tx *Tx) TrailingFraudCounts(ctx context.Context, cs []domain.FraudCount, window int64) ([]int64, error) {
	if tx.s.fmem == nil {
		return tx.trailingFraudRows(ctx, cs, window)
	}
	// A country's count adds the pending counts, which the lock keeps.
	tx.s.fmem.mu.Lock()
	defer tx.s.fmem.mu.Unlock()
	out := make([]int64, len(cs))
	var rows []domain.FraudCount
	var rowAt []int
	for i, c := range cs {
		if !memScope(c.Scope) {
			rows, rowAt = append(rows, c), append(rowAt, i)
			continue
		}
		n, err := tx.seedFraud(ctx, c, c.Hour-window, c.Hour)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	if len(rows) > 0 {
		got, err := tx.trailingFraudRows(ctx, rows, window)
		if err != nil {
			return nil, err
		}
		for j, i := range rowAt {
			out[i] = got[j]
		}
	}
	return out, nil
}

// trailingFraudRows sums counts' rows (TrailingFraudCounts).
func (tx *Tx) trailingFraudRows(ctx context.Context, cs []domain.FraudCount, window int64) ([]int64, error) {
	got := map[string]int64{}
	for _, pc := range pieces(len(cs), 200) {
		chunk := cs[pc[0]:pc[1]]
		query := tx.s.shape("trailing fraud counts "+strconv.FormatInt(window, 10), len(chunk), func() string {
			var b strings.Builder
			b.WriteString(`SELECT account_id, env, scope, fkey, hour, n FROM fraud_counts WHERE `)
			for i := range chunk {
				if i > 0 {
					b.WriteString(" OR ")
				}
				p := 1 + i*5
				fmt.Fprintf(&b, "(account_id = $%d AND env = $%d AND scope = $%d AND fkey = $%d AND hour >= $%d - %d AND hour < $%d)",
					p, p+1, p+2, p+3, p+4, window, p+4)
			}
			return b.String()
		})
		args := make([]any, 0, len(chunk)*5)
		for _, c := range chunk {
			args = append(args, c.AccountID, string(c.Env), c.Scope, c.Key, c.Hour)
		}
		var c domain.FraudCount
		var env string
		err := rowsOf(tx.query(ctx, query, args...)).scan([]any{&c.AccountID, &env, &c.Scope, &c.Key, &c.Hour, &c.N}, func() {
			c.Env = domain.Environment(env)
			c.Hour = 0
			got[countKey(c)] += c.N
		})
		if err != nil {
			return nil, fmt.Errorf("trailing fraud counts: %w", err)
		}
	}
	out := make([]int64, len(cs))
	for i, c := range cs {
		c.Hour = 0
		out[i] = got[countKey(c)]
	}
	return out, nil
}

// MarkFraudHours adds each hour's decisions to its row and reports which
// rows are new (whose alert goes out now), in the caller's transaction.
// On PostgreSQL a concurrent insert of the same row waits for the first
// transaction, so one of them alone finds it new. On SQLite the rows this
// process knows exist are added to in memory and written later
// (fraudmem.go).
func (tx *Tx) MarkFraudHours(ctx context.Context, hs []domain.FraudHour) ([]bool, error) {
	if tx.s.fmem != nil {
		return tx.markMemHours(ctx, hs)
	}
	fresh := make([]bool, len(hs))
	for i, h := range hs {
		isNew, err := tx.upsertFraudHour(ctx, h)
		if err != nil {
			return nil, err
		}
		fresh[i] = isNew
	}
	return fresh, nil
}

// upsertFraudHour adds an hour's decisions to its row and tells whether
// the row is new. One statement whether the row is new or not: a row the
// statement opened holds its own messages alone (every mark adds at least
// one), a row that was there holds more.
func (tx *Tx) upsertFraudHour(ctx context.Context, h domain.FraudHour) (bool, error) {
	var after int64
	err := tx.queryRow(ctx, `INSERT INTO fraud_hours (hour, account_id, rule, fkey, scope, action, messages)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (hour, account_id, rule, fkey)
		DO UPDATE SET messages = fraud_hours.messages + excluded.messages RETURNING messages`,
		hourOf(h.Hour), h.AccountID, h.Rule, h.Key, h.Scope, string(h.Action), h.Messages).Scan(&after)
	if err != nil {
		return false, fmt.Errorf("mark fraud hour: %w", err)
	}
	return after == h.Messages, nil
}
