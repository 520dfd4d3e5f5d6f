package store

import (
	"context"
	"fmt"
	"hash/fnv"

	"github.com/msgsvc/msgsvc/internal/domain"
)

var optOuts = newTable("opt_outs", func(o *domain.OptOut, c cols) cols {
	return c.add(int64Col("seq", &o.Seq), textCol("account_id", &o.AccountID), enumCol("env", &o.Env),
		textCol("phone", &o.Phone), enumCol("channel", &o.Channel), textCol("source", &o.Source),
		timeCol("created_at", &o.CreatedAt))
})

// The opt-out check of a send and the recording of a stop word are ordered
// per account, so that an opt-out applies to every send committed after it
// (a recipient who said stop gets nothing sent later). On PostgreSQL a send takes a shared transaction
// advisory lock of its account before it reads opt_outs, and a stop word
// the exclusive one before it writes: whichever comes second waits for the
// first to commit, and under READ COMMITTED the send's read, a statement
// after its lock, sees any opt-out committed while it waited. Sends share
// the lock, so those of one account do not wait for each other. Advisory
// locks queue in order: a stop word waits only for the sends already
// holding the lock, and sends that come after it wait behind it (a row
// lock would let a steady stream of sends starve it). SQLite has one
// writer: its transactions are already in order.
func (tx *Tx) lockOptOuts(ctx context.Context, accountID string, exclusive bool) error {
	if tx.s.dialect != Postgres {
		return nil
	}
	fn := "pg_advisory_xact_lock_shared"
	if exclusive {
		fn = "pg_advisory_xact_lock"
	}
	if _, err := tx.exec(ctx, `SELECT `+fn+`($1)`, optOutLockKey(accountID)); err != nil {
		return fmt.Errorf("lock the opt-outs of %s: %w", accountID, err)
	}
	return nil
}

// optOutLockKey is the advisory lock key of an account's opt-outs. Two
// accounts that share a key only wait for each other a little more.
func optOutLockKey(accountID string) int64 {
	h := fnv.New64a()
	h.Write([]byte("msgsvc opt-outs\x00" + accountID))
	return int64(h.Sum64())
}

// OptedOut returns which of phones are opted out of the account's messages
// in env, read inside the send's transaction after the lock of the
// account's opt-outs (see lockOptOuts): one indexed lookup for a whole
// group of sends of the account, however many recipients.
func (tx *Tx) OptedOut(ctx context.Context, accountID string, env domain.Environment, phones []string) (map[string]bool, error) {
	if len(phones) == 0 {
		return nil, nil
	}
	if err := tx.lockOptOuts(ctx, accountID, false); err != nil {
		return nil, err
	}
	return optedOut(ctx, tx.query, tx.s, accountID, env, phones)
}

// OptedOut is the same lookup outside a transaction (dry runs).
func (s *Store) OptedOut(ctx context.Context, accountID string, env domain.Environment, phones []string) (map[string]bool, error) {
	return optedOut(ctx, s.rquery, s, accountID, env, phones)
}

func optedOut(ctx context.Context, query func(context.Context, string, ...any) (rowsScanner, error), s *Store,
	accountID string, env domain.Environment, phones []string) (map[string]bool, error) {
	var out map[string]bool
	for _, pc := range pieces(len(phones), 512) {
		chunk := phones[pc[0]:pc[1]]
		args := make([]any, 0, len(chunk)+2)
		args = append(args, accountID, string(env))
		for _, p := range chunk {
			args = append(args, p)
		}
		var p string
		err := rowsOf(query(ctx, `SELECT phone FROM opt_outs WHERE account_id = $1 AND env = $2 AND phone IN (`+
			s.placeholders(3, len(chunk))+`)`, args...)).scan([]any{&p}, func() {
			if out == nil {
				out = map[string]bool{}
			}
			out[p] = true
		})
		if err != nil {
			return nil, fmt.Errorf("opted-out recipients: %w", err)
		}
	}
	return out, nil
}

// AddOptOut records an opt-out in the caller's transaction; added is false
// when the number was already opted out (the first record stays).
func (tx *Tx) AddOptOut(ctx context.Context, o domain.OptOut) (added bool, err error) {
	if err := tx.lockOptOuts(ctx, o.AccountID, true); err != nil {
		return false, err
	}
	res, err := tx.exec(ctx, `INSERT INTO opt_outs (account_id, env, phone, channel, source, created_at)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (account_id, env, phone) DO NOTHING`,
		o.AccountID, string(o.Env), o.Phone, string(o.Channel), o.Source, ms(o.CreatedAt))
	if err != nil {
		return false, fmt.Errorf("add opt-out: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// RemoveOptOut deletes an opt-out in the caller's transaction; removed is
// false when there was none.
func (tx *Tx) RemoveOptOut(ctx context.Context, accountID string, env domain.Environment, phone string) (removed bool, err error) {
	res, err := tx.exec(ctx, `DELETE FROM opt_outs WHERE account_id = $1 AND env = $2 AND phone = $3`, accountID, string(env), phone)
	if err != nil {
		return false, fmt.Errorf("remove opt-out: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// OptOuts lists an account's opt-outs in an environment in the order they
// were written, after the one at seq after (0 for the first page).
func (s *Store) OptOuts(ctx context.Context, accountID string, env domain.Environment, after int64, limit int) ([]domain.OptOut, error) {
	return optOuts.scanAll(s.rquery(ctx, `SELECT `+optOuts.list+` FROM opt_outs WHERE account_id = $1 AND env = $2
		AND seq > $3 ORDER BY seq LIMIT $4`, accountID, string(env), after, limit))
}

// OptOut reads one opt-out.
func (s *Store) OptOut(ctx context.Context, accountID string, env domain.Environment, phone string) (domain.OptOut, error) {
	return optOuts.scan(s.rqueryRow(ctx, `SELECT `+optOuts.list+` FROM opt_outs WHERE account_id = $1 AND env = $2
		AND phone = $3`, accountID, string(env), phone))
}

// AddOptOut records an opt-out in a transaction of its own (operators'
// tools and the panel).
func (s *Store) AddOptOut(ctx context.Context, o domain.OptOut) (added bool, err error) {
	err = s.Write(ctx, func(tx *Tx) error {
		added, err = tx.AddOptOut(ctx, o)
		return err
	})
	return added, err
}

// RemoveOptOut deletes an opt-out in a transaction of its own.
func (s *Store) RemoveOptOut(ctx context.Context, accountID string, env domain.Environment, phone string) (removed bool, err error) {
	err = s.Write(ctx, func(tx *Tx) error {
		removed, err = tx.RemoveOptOut(ctx, accountID, env, phone)
		return err
	})
	return removed, err
}
