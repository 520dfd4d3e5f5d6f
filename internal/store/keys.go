package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/msgsvc/msgsvc/internal/domain"
	"time"
)

var keys = newTable("api_keys", func(k *domain.APIKey, c cols) cols {
	return c.add(textCol("id", &k.ID), textCol("account_id", &k.AccountID), enumCol("env", &k.Env),
		textCol("prefix", &k.Prefix), textCol("hash", &k.Hash), textCol("name", &k.Name),
		timeCol("created_at", &k.CreatedAt), timeCol("last_used_at", &k.LastUsedAt),
		timeCol("revoked_at", &k.RevokedAt))
})

// CreateKey stores a new key.
func (s *Store) CreateKey(ctx context.Context, k domain.APIKey) error {
	return s.run(ctx, "create key", keys.insert(s), keys.args(&k, nil)...)
}

// KeyByHash finds an active or revoked key by its hash, with its account, in
// one read: authentication happens on every request.
func (s *Store) KeyByHash(ctx context.Context, hash string) (domain.APIKey, domain.Account, error) {
	k, a, _, err := s.KeyByHashVersion(ctx, hash)
	return k, a, err
}

// KeyByHashVersion is KeyByHash with the AuthVersion its answer is as
// of, read in the same statement: a cache that keeps the answer under that
// version knows it is current as long as the version has not moved.
func (s *Store) KeyByHashVersion(ctx context.Context, hash string) (domain.APIKey, domain.Account, int64, error) {
	row := s.rqueryRow(ctx, `SELECT (SELECT version FROM auth_version WHERE id = 1), `+prefixed("k.", keys.list)+`, `+
		s.accountList("a")+` FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.hash = $1`, hash)
	var k domain.APIKey
	var a domain.Account
	var v int64
	err := row.Scan(accounts.dests(&a, keys.dests(&k, []any{&v}))...)
	if errors.Is(err, sql.ErrNoRows) {
		return k, a, 0, domain.ErrNotFound
	}
	if err != nil {
		return k, a, 0, fmt.Errorf("scan key: %w", err)
	}
	return k, a, v, nil
}

// AuthVersion reads the counter that moves whenever a key is revoked or an
// account's settings change (database triggers keep it; see migration
// 00050). Updates of the balance alone leave it as it is.
func (s *Store) AuthVersion(ctx context.Context) (int64, error) {
	var v int64
	if err := s.rqueryRow(ctx, `SELECT version FROM auth_version WHERE id = 1`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read auth version: %w", err)
	}
	return v, nil
}

// AuthVersion reads the auth counter in the caller's transaction.
func (tx *Tx) AuthVersion(ctx context.Context) (int64, error) {
	began := time.Now()
	var v int64
	if err := tx.queryRow(ctx, `SELECT version FROM auth_version WHERE id = 1`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read auth version: %w", err)
	}
	tx.authSeen.v, tx.authSeen.began, tx.authSeen.ok = v, began, true
	return v, nil
}

// WatchAuthVersion has fn offered the auth counter each time a write
// transaction that read it commits, with when the read began (time.Now,
// for its monotonic reading), so that a cache that must see a change made
// before a caller asked (keycache) can take a read of the writer's that
// began after the caller asked instead of making its own: under load the
// writer reads the counter for every group of sends. A read made after a
// transaction's writes began counts only once it committed with every
// write of its group: a read that saw a change the transaction then
// undid, or one not yet committed, would let a cache keep what it read of
// the old settings under the new counter. The read a watcher asked for
// (AskAuthVersion) comes before any write, and is offered at once.
func (s *Store) WatchAuthVersion(fn func(v int64, began time.Time)) {
	for {
		old := s.authWatchers.Load()
		var fns []func(int64, time.Time)
		if old != nil {
			fns = append(fns, *old...)
		}
		fns = append(fns, fn)
		if s.authWatchers.CompareAndSwap(old, &fns) {
			return
		}
	}
}

// AskAuthVersion returns the call that asks SQLite's writer to read the
// auth counter at the start of its next transaction, whatever the
// transaction is for, and to offer it to the watchers at once. On the writer's
// connection the read costs a few microseconds, its pages being the ones
// it just wrote; a reader's connection starts every read after a write
// from an empty page cache. On PostgreSQL it returns nil: its groups are
// pipelined, a read would make one wait for a round trip, and the
// readers' reads cost no more than the writer's would.
func (s *Store) AskAuthVersion() func() {
	if s.dialect != SQLite {
		return nil
	}
	return func() {
		if !s.authWanted.Load() {
			s.authWanted.Store(true)
		}
	}
}

// readWantedAuth reads the auth counter in tx when a watcher asked for it
// (AskAuthVersion), at the start of the transaction: a read that began
// after the asking. Nothing of the transaction has run yet, so the read
// saw only what other transactions committed, and it is offered at once:
// the watchers' callers (a webhook about to be signed) need not wait for
// the group's statements and its commit, which at low concurrency had
// often taken longer than the signer waits for an offer before it reads
// for itself.
func (s *Store) readWantedAuth(tx *Tx) error {
	if !s.authWanted.Load() || !s.authWanted.Swap(false) {
		return nil
	}
	v, err := tx.AuthVersion(tx.ctx)
	if err != nil {
		return err
	}
	s.offerRead(v, tx.authSeen.began)
	tx.authSeen.ok = false // offered; a later read in tx is offered at its commit
	return nil
}

// offerAuth offers the watchers what a committed transaction read of the
// auth counter, when every write of its group succeeded.
func (s *Store) offerAuth(tx *Tx, results []error) {
	if !tx.authSeen.ok {
		return
	}
	for _, err := range results {
		if err != nil {
			return
		}
	}
	s.offerRead(tx.authSeen.v, tx.authSeen.began)
}

// offerRead offers the watchers a read of the auth counter that began at
// began and saw only committed writes.
func (s *Store) offerRead(v int64, began time.Time) {
	fns := s.authWatchers.Load()
	if fns == nil {
		return
	}
	for _, fn := range *fns {
		fn(v, began)
	}
}

// Keys lists an account's keys, newest first.
func (s *Store) Keys(ctx context.Context, accountID string) ([]domain.APIKey, error) {
	return keys.scanAll(s.rquery(ctx, `SELECT `+keys.list+` FROM api_keys WHERE account_id = $1 ORDER BY `+s.seq()+` DESC`,
		accountID))
}

// RevokeKey marks a key revoked; it stops working at once.
func (s *Store) RevokeKey(ctx context.Context, accountID, keyID string, at time.Time) error {
	res, err := s.wexec(ctx, `UPDATE api_keys SET revoked_at = $3 WHERE id = $1 AND account_id = $2 AND revoked_at IS NULL`,
		keyID, accountID, ms(at))
	return affectedOne(res, err, "revoke key")
}

// TouchKey records that a key was used. Callers throttle it: a write per
// request would cost more than the request.
func (s *Store) TouchKey(ctx context.Context, keyID string, at time.Time) error {
	return s.run(ctx, "touch key", `UPDATE api_keys SET last_used_at = $2 WHERE id = $1`, keyID, ms(at))
}
