// Package store keeps msgsvc's state in SQLite or PostgreSQL. Both dialects
// run the same plain SQL (times as Unix milliseconds, money as integer
// micro-credits, no dialect-only types); the few statements that differ are
// chosen by Dialect. The store knows rows and transactions, not business rules.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver

	"github.com/msgsvc/msgsvc/internal/batch"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/ledger"
)

// Dialect names the SQL engine behind a Store.
type Dialect string

const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// Store is a handle on the database. It is safe for concurrent use.
type Store struct {
	dialect Dialect
	// w takes every write. On SQLite the store's writes run on wr, one
	// connection of w held for good (sqlitewriter.go): SQLite has one
	// writer anyway, and queuing for it is cheaper than SQLITE_BUSY
	// retries; w's other connection serves migrations and tools. r serves
	// reads (WAL readers never block the writer).
	w, r   *sql.DB
	wr     *sqliteWriter // SQLite only
	now    func() time.Time
	stmts  stmtCache
	phs    sync.Map // [2]int{from, n} -> placeholder list
	shapes sync.Map // shapeKey -> the text of a multi-row statement
	writes *batch.Batcher[func(tx *Tx) error, error]
	holder string // names this process's shares of balances (balance.go)
	// health is whether the last write failed for want of a writable
	// database (readiness).
	health writeHealth
	// fmem keeps the fraud guard's counts of recipients and ranges on
	// SQLite (fraudmem.go); nil on PostgreSQL, whose nodes share rows.
	fmem *fraudMemory
	// txTimes: how the write transactions spent their time (WriteStats).
	txTimes txCounters
	// parked: whether SQLite's pending_reports is known empty (parts.go).
	parked parkedState
	// authWatchers are offered the auth counter as the writer's
	// transactions read it (WatchAuthVersion).
	authWatchers atomic.Pointer[[]func(v int64, began time.Time)]
	// authWanted: a watcher asked the writer to read the counter
	// (AskAuthVersion).
	authWanted atomic.Bool
}

// Options tune Open. The zero value is fine.
type Options struct {
	Now func() time.Time
	// MaxConns bounds the PostgreSQL pool (default 24).
	MaxConns int
	// Writers is the number of transactions that group concurrent writes
	// (default: 1 on SQLite, which has one writer; 8 on PostgreSQL).
	Writers int
	// Holder names this process on PostgreSQL (the node id): each of its
	// writers debits its own share of an account's balance instead of the
	// account row, so sends on several nodes never wait for each other.
	// Empty (tools, tests) debits the row.
	Holder string
}

// Open connects to dsn: "postgres://…" or "postgresql://…" for PostgreSQL,
// otherwise a SQLite file path, optionally written "sqlite:PATH". The SQLite
// file's directory is created when missing. Open does not migrate.
func Open(ctx context.Context, dsn string, o Options) (*Store, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	s := &Store{now: o.Now, stmts: stmtCache{m: map[string]*stmt{}}, holder: o.Holder}
	var err error
	switch {
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		s.dialect = Postgres
		s.w, err = sql.Open("pgx", dsn)
		if err != nil {
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		n := o.MaxConns
		if n <= 0 {
			n = 24 // three nodes stay well under PostgreSQL's default 100
		}
		s.w.SetMaxOpenConns(n)
		s.w.SetMaxIdleConns(n)
		s.w.SetConnMaxIdleTime(5 * time.Minute)
		s.r = s.w
	default:
		s.dialect = SQLite
		path := strings.TrimPrefix(dsn, "sqlite:")
		if path == "" {
			return nil, errors.New("open sqlite: empty path")
		}
		if dir := filepath.Dir(path); dir != "." {
			if err := os.MkdirAll(dir, 0o750); err != nil {
				return nil, fmt.Errorf("create data directory: %w", err)
			}
		}
		wdsn, err := sqliteDSN(path, true)
		if err != nil {
			return nil, fmt.Errorf("open sqlite: %w", err)
		}
		rdsn, err := sqliteDSN(path, false)
		if err != nil {
			return nil, fmt.Errorf("open sqlite: %w", err)
		}
		s.w, err = sql.Open(sqliteDriver, wdsn)
		if err != nil {
			return nil, fmt.Errorf("open sqlite: %w", err)
		}
		// One connection for wr, which holds it; one for the migrations.
		s.w.SetMaxOpenConns(2)
		s.w.SetMaxIdleConns(1)
		s.w.SetConnMaxLifetime(0)
		s.wr = newSQLiteWriter(s.w)
		s.r, err = sql.Open(sqliteDriver, rdsn)
		if err != nil {
			return nil, fmt.Errorf("open sqlite reader: %w", err)
		}
		s.r.SetMaxOpenConns(4)
		s.r.SetMaxIdleConns(4)
		s.fmem = newFraudMemory()
	}
	if err := s.Ping(ctx); err != nil {
		if s.wr != nil {
			s.wr.close()
		}
		s.w.Close()
		if s.r != s.w {
			s.r.Close()
		}
		return nil, err
	}
	writers := o.Writers
	if writers <= 0 {
		writers = 1
		if s.dialect == Postgres {
			// PostgreSQL runs transactions in parallel and each statement
			// is a network round trip: more, smaller groups keep it busy.
			writers = 8
		}
	}
	opts := []batch.Option{batch.Clock(s.now)}
	if s.dialect == SQLite && writers == 1 {
		// One writer runs every transaction of the node, each with its
		// fixed cost (the lock, the log's header, the sync); behind it
		// the sends, the reports and the webhook outcomes each queue
		// their own function. When the writer finds work waiting, it
		// waits up to half a millisecond for a third function to share
		// the transaction: at low concurrency, where groups are small,
		// that halves the transactions.
		opts = append(opts, batch.Linger(writerLinger, 3))
	}
	s.writes = batch.New(s.writeGroup, 64, writers, opts...)
	return s, nil
}

// writerLinger is how long SQLite's busy writer waits for company.
const writerLinger = 500 * time.Microsecond

// Dialect reports which engine this store runs on.
func (s *Store) Dialect() Dialect { return s.dialect }

// Ping checks that the database answers; /readyz uses it.
func (s *Store) Ping(ctx context.Context) error {
	ping := s.w.PingContext
	if s.wr != nil {
		ping = s.wr.ping
	}
	if err := ping(ctx); err != nil {
		return fmt.Errorf("ping %s: %w", s.dialect, err)
	}
	return nil
}

// Close waits for the writes under way and releases the connections.
func (s *Store) Close() error {
	s.writes.Close()
	// The countries' counts not yet written as rows are written now
	// (fraudmem.go); a store that cannot write loses them, as a crash
	// would.
	_ = s.flushPendingFraud(context.Background())
	if s.wr != nil {
		s.wr.close()
	}
	err := s.w.Close()
	if s.r != s.w {
		if e := s.r.Close(); err == nil {
			err = e
		}
	}
	return err
}

// Tx is a write transaction. Its methods are the store's write operations.
type Tx struct {
	// lite runs the statements on SQLite, with ctx, the group's context,
	// in place of the callers' (see sqlitewriter.go).
	lite   *sqliteWriter
	ctx    context.Context
	pg     *pipeline // PostgreSQL
	s      *Store
	holder string   // PostgreSQL: the share of balances this transaction's writer debits
	fx     *fraudTx // SQLite: the fraud counts staged by this transaction
	// tookReports: this transaction deleted parked reports (SQLite), so
	// what it reads of pending_reports is not the committed table.
	tookReports bool
	// authSeen: the auth counter as this transaction read it, offered to
	// the watchers once it commits (WatchAuthVersion).
	authSeen struct {
		v     int64
		began time.Time
		ok    bool
	}
}

// Write runs fn in a write transaction and returns once it is committed
// (or fn's error, with fn's writes undone). Concurrent calls share one
// transaction: each fn runs inside its own savepoint, so a failing fn
// undoes only its own writes, and the whole group pays for one commit.
// Every write path of the service (sends, status reports, claims, webhook
// outcomes) meets here, which is what lets one SQLite writer keep up.
// Transient conflicts (PostgreSQL serialization failures and deadlocks,
// SQLite busy) re-run the group.
func (s *Store) Write(ctx context.Context, fn func(tx *Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	// Once queued, wait for the outcome even if ctx ends: callers read
	// what fn wrote into their variables, so fn must be finished first.
	res, err := s.writes.Do(context.WithoutCancel(ctx), fn)
	if err != nil {
		return err
	}
	return res
}

// writeSoon is Write for a write that may wait up to wait for the next
// transaction of other writes to ride with, rather than cost one of its
// own (batch.Batcher.DoSoon); it still returns once it is committed.
func (s *Store) writeSoon(ctx context.Context, wait time.Duration, fn func(tx *Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	res, err := s.writes.DoSoon(context.WithoutCancel(ctx), fn, wait)
	if err != nil {
		return err
	}
	return res
}

// writeGroup runs a group of write functions in one transaction.
func (s *Store) writeGroup(ctx context.Context, fns []func(tx *Tx) error) ([]error, error) {
	results, err := s.writeGroupOnce(ctx, fns)
	err = classify(err)
	var failed error
	for i := range results {
		results[i] = classify(results[i])
		if errors.Is(results[i], domain.ErrStorageUnavailable) {
			failed = results[i]
		}
	}
	if err != nil {
		failed = err
	}
	s.health.observe(failed, s.now())
	return results, err
}

func (s *Store) writeGroupOnce(ctx context.Context, fns []func(tx *Tx) error) ([]error, error) {
	var results []error
	var err error
	careful := false // PostgreSQL: each write sent at once; SQLite: each write in a savepoint
	busy := 0
	for attempt := 0; attempt < 5; attempt++ {
		if s.dialect == Postgres {
			results, err = s.pgWriteOnce(ctx, fns, careful)
		} else {
			results, err = s.writeOnce(ctx, fns, careful)
		}
		var lost errPipeline
		if (errors.As(err, &lost) || errors.Is(err, errUnguarded)) && !careful {
			careful = true // run again with each write sent at once, or in a savepoint of its own
			continue
		}
		if err == nil || !retryable(err) {
			return results, err
		}
		// Credits held in other writers' shares come back when their
		// transactions end. Under a burst on a nearly spent account the
		// writers kept finding each other's shares in flight, run after
		// run, until the sends failed; so the group now waits for those
		// transactions to end (holding nothing) and runs again on their
		// outcome, which settles within a run or two.
		var held busyBalance
		if errors.As(err, &held) && busy < busyRetries {
			busy++
			attempt--
			if werr := s.waitShares(ctx, held.account); werr != nil {
				return results, werr
			}
			time.Sleep(rand.N(5 * time.Millisecond))
			continue
		}
		time.Sleep(time.Duration(attempt+1) * 5 * time.Millisecond)
	}
	return results, err
}

// busyRetries bounds the extra runs of a group whose debit found the
// account's credits in shares held by transactions in flight.
const busyRetries = 20

// errUnguarded: a write of a group run without savepoints failed, so the
// whole transaction was rolled back; the group runs again, each write in a
// savepoint.
var errUnguarded = errors.New("store: a write of an unguarded group failed")

// writeOnce runs a group of writes in one SQLite transaction.
//
// A write of a group must not take the others down with it, which a
// savepoint around each would ensure. But SQLite copies every page a
// savepoint's statements change for the first time into a journal of its
// own, in case the savepoint is rolled back, and writes almost never fail.
// So a group first runs without savepoints; if one of its writes then
// fails, the whole transaction is rolled back and the group runs again
// with each write in a savepoint (careful), as a group does after a busy
// database. Writes are run again after a rollback in any case, so they
// hold no state across runs.
func (s *Store) writeOnce(ctx context.Context, fns []func(tx *Tx) error, careful bool) ([]error, error) {
	w := s.wr
	if err := w.acquire(ctx); err != nil {
		return nil, err
	}
	defer w.release()
	if err := w.begin(ctx); err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	tx := &Tx{lite: w, ctx: ctx, s: s}
	begun := s.now()
	if err := s.readWantedAuth(tx); err != nil {
		w.rollback(ctx)
		return nil, err
	}
	results := make([]error, len(fns))
	switch {
	case len(fns) == 1:
		// Alone in the transaction: no savepoint needed.
		if results[0] = fns[0](tx); results[0] != nil {
			w.rollback(ctx)
			if retryable(results[0]) {
				return nil, results[0]
			}
			return results, nil
		}
	case !careful:
		for i, fn := range fns {
			if results[i] = fn(tx); results[i] != nil {
				w.rollback(ctx)
				if retryable(results[i]) {
					return nil, results[i]
				}
				return nil, errUnguarded
			}
		}
	default:
		// The savepoint statements are prepared like any other: a group
		// of n writes runs 2n of them.
		for i, fn := range fns {
			if _, err := w.exec(ctx, "SAVEPOINT w"); err != nil {
				w.rollback(ctx)
				return nil, fmt.Errorf("savepoint: %w", err)
			}
			mark := tx.fraudMark()
			if results[i] = fn(tx); results[i] != nil {
				if retryable(results[i]) {
					w.rollback(ctx)
					return nil, results[i]
				}
				if _, err := w.exec(ctx, "ROLLBACK TO SAVEPOINT w"); err != nil {
					w.rollback(ctx)
					return nil, fmt.Errorf("rollback to savepoint: %w", err)
				}
				tx.fraudUndo(mark)
			}
			if _, err := w.exec(ctx, "RELEASE SAVEPOINT w"); err != nil {
				w.rollback(ctx)
				return nil, fmt.Errorf("release savepoint: %w", err)
			}
		}
	}
	if err := tx.flushFraudRows(ctx); err != nil {
		w.rollback(ctx)
		return nil, err
	}
	executed := s.now()
	if err := s.commitSQLite(ctx, tx); err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	s.txTimes.add(executed.Sub(begun), s.now().Sub(executed))
	s.offerAuth(tx, results)
	return results, nil
}

// commitSQLite commits a write transaction, and the fraud counts it
// staged with it: they join the memory before the commit, under a lock
// held until the commit has returned, so that the next transaction starts
// from them; a failed commit drops the memory (it is seeded again) and
// leaves the countries' pending counts as they were.
func (s *Store) commitSQLite(ctx context.Context, tx *Tx) error {
	if s.fmem == nil || tx.fx == nil {
		return tx.lite.commit(ctx)
	}
	s.fmem.mu.Lock()
	defer s.fmem.mu.Unlock()
	tx.commitFraud()
	err := tx.lite.commit(ctx)
	if err != nil {
		s.forgetFraud()
		return err
	}
	tx.settleFraudRows()
	tx.spareFraudState()
	return nil
}

// TxStats tell how the write transactions that committed spent their
// time: running their writes (on PostgreSQL, queuing them and the round
// trips of those whose answers were read) and committing (on SQLite,
// appending the transaction to the write-ahead log, which it does not
// sync; on PostgreSQL, the round trip of the last batch and COMMIT).
type TxStats struct {
	Committed       int64
	Execute, Commit time.Duration
}

type txCounters struct{ committed, execute, commit atomic.Int64 }

func (c *txCounters) add(execute, commit time.Duration) {
	c.committed.Add(1)
	c.execute.Add(int64(execute))
	c.commit.Add(int64(commit))
}

// WriteStats reads how the groups of writes (store.Write) and their
// transactions went since Open.
func (s *Store) WriteStats() (batch.Stats, TxStats) {
	c := &s.txTimes
	return s.writes.Stats(), TxStats{Committed: c.committed.Load(), Execute: time.Duration(c.execute.Load()),
		Commit: time.Duration(c.commit.Load())}
}

// ms converts a time to the stored form.
func ms(t time.Time) int64 { return t.UnixMilli() }

// fromMS converts a stored time back; 0 and NULL mean "never".
func fromMS(v sql.NullInt64) time.Time {
	if !v.Valid || v.Int64 == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v.Int64).UTC()
}

// msOrNil is nullMS as a statement's argument: NULL, or the
// milliseconds.
func msOrNil(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMilli()
}

func nullMS(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMilli(), Valid: true}
}

// writeValues writes the VALUES list of a multi-row insert: rows groups of
// cols placeholders, numbered from $1 row after row.
func (s *Store) writeValues(b *strings.Builder, rows, cols int) {
	for i := 0; i < rows; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(" + s.placeholders(i*cols+1, cols) + ")")
	}
}

// multiWrite is verb (INSERT or UPDATE) for a statement that writes
// several rows in a write group's transaction. On SQLite it asks for FAIL
// instead of the default ABORT on a constraint: to undo a failed statement
// alone, an ABORT statement copies every page it changes for the first time
// into a statement journal, and nothing here needs that. A failed write
// fails its group's transaction (or the write's savepoint), which undoes
// the statement's rows with the rest. Two kinds of statement journal all
// the same: an upsert's update always aborts, and SQLite journals every
// multi-row write that an immediate foreign key checks (the ledger's).
func (s *Store) multiWrite(verb string) string {
	if s.dialect == SQLite {
		return verb + " OR FAIL"
	}
	return verb
}

// placeholders returns "($from, $from+1, …)" for n arguments. Multi-row
// inserts call it for every row, so the strings are built once.
func (s *Store) placeholders(from, n int) string {
	key := [2]int{from, n}
	if v, ok := s.phs.Load(key); ok {
		return v.(string)
	}
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(from + i))
	}
	v := b.String()
	s.phs.Store(key, v)
	return v
}

// shapeKey names one shape of a multi-row statement: which statement, for
// how many rows.
type shapeKey struct {
	name string
	rows int
}

// shape returns the text of a multi-row statement for rows rows, built
// once per shape: the batches of the hot path come in a few sizes (see
// pieces), and building their text each time (thousands of characters for
// a chunk of messages) cost more allocation than the rest of the batch.
func (s *Store) shape(name string, rows int, build func() string) string {
	key := shapeKey{name, rows}
	if v, ok := s.shapes.Load(key); ok {
		return v.(string)
	}
	v := build()
	s.shapes.Store(key, v)
	return v
}

// prefixed qualifies every column of a comma-separated list with p.
func prefixed(p, cols string) string {
	parts := strings.Split(cols, ",")
	for i, c := range parts {
		parts[i] = p + strings.TrimSpace(c)
	}
	return strings.Join(parts, ", ")
}

func splitComma(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// ErrInsufficientCredits: a debit the balance does not cover (the ledger's
// error, named here for the store's callers).
var ErrInsufficientCredits = ledger.ErrInsufficientCredits
