package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"strconv"
	"sync"
)

// The queries are written once with PostgreSQL's numbered placeholders
// ($1, $2, …). On SQLite they are rewritten to anonymous "?" with the
// arguments reordered to match: SQLite resolves named and numbered
// parameters through a list it scans linearly for every bound value, which
// makes a multi-row INSERT quadratic in its parameter count, while
// anonymous parameters skip that list altogether. SQLite statements are
// also prepared once and reused, because parsing was the largest single
// cost of a send. (pgx caches prepared statements by itself.)

// stmt is a query ready for the store's dialect.
type stmt struct {
	sql   string
	order []int     // SQLite: for each "?", the index of the argument it takes
	r     *sql.Stmt // SQLite: prepared on the readers (the writer keeps its own, sqlitewriter.go)
}

// maxCachedStmts bounds the statement caches; the few query shapes built
// at run time (multi-row inserts, search filters) stay far below it.
const maxCachedStmts = 4096

type stmtCache struct {
	mu sync.Mutex
	m  map[string]*stmt
}

// prep finds or makes the read statement for query.
func (s *Store) prep(ctx context.Context, query string) stmt {
	if s.dialect != SQLite {
		return stmt{sql: query}
	}
	s.stmts.mu.Lock()
	st, ok := s.stmts.m[query]
	if !ok {
		st = rewrite(query)
		if len(s.stmts.m) < maxCachedStmts {
			s.stmts.m[query] = st
		}
	}
	snap := *st // callers read this copy; the cached entry may change
	s.stmts.mu.Unlock()
	// Preparing outside the lock is fine: a race only prepares twice.
	if snap.r == nil {
		if p, err := s.r.PrepareContext(ctx, snap.sql); err == nil {
			s.stmts.mu.Lock()
			if st.r == nil {
				st.r = p
			} else {
				p.Close()
			}
			snap.r = st.r
			s.stmts.mu.Unlock()
		}
	}
	return snap
}

// rewrite turns $N placeholders into "?" and records the argument order.
func rewrite(query string) *stmt {
	out := make([]byte, 0, len(query))
	var order []int
	for i := 0; i < len(query); i++ {
		c := query[i]
		if c == '$' && i+1 < len(query) && query[i+1] >= '0' && query[i+1] <= '9' {
			j := i + 1
			for j < len(query) && query[j] >= '0' && query[j] <= '9' {
				j++
			}
			n, _ := strconv.Atoi(query[i+1 : j])
			order = append(order, n-1)
			out = append(out, '?')
			i = j - 1
			continue
		}
		out = append(out, c)
	}
	return &stmt{sql: string(out), order: order}
}

func (st stmt) args(args []any) []any {
	for i, a := range args {
		args[i] = plain(a)
	}
	if st.order == nil {
		return args
	}
	out := make([]any, len(st.order))
	for i, idx := range st.order {
		if idx >= 0 && idx < len(args) {
			out[i] = args[idx]
		}
	}
	return out
}

// rowsScanner is what reading a query's rows needs: *sql.Rows, or rows
// read from a pipeline's batch.
type rowsScanner interface {
	Next() bool
	Scan(dest ...any) error
	Close() error
	Err() error
}

// rowSet is a query's outcome, its rows or its error, for scan.
type rowSet struct {
	rows rowsScanner
	err  error
}

func rowsOf(rows rowsScanner, err error) rowSet { return rowSet{rows, err} }

// scan reads every row into dests, the same variables for each row, and
// calls each after every row to take what it needs from them; it closes
// the rows. Every dest must be set by every row (a scanner that leaves its
// field alone on NULL would carry the previous row's value over).
func (q rowSet) scan(dests []any, each func()) error {
	if q.err != nil {
		return q.err
	}
	defer q.rows.Close()
	for q.rows.Next() {
		if err := q.rows.Scan(dests...); err != nil {
			return err
		}
		each()
	}
	return q.rows.Err()
}

// rowScanner reads one row: *sql.Row, or the first row of a batch query.
type rowScanner interface {
	Scan(dest ...any) error
}

func (tx *Tx) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if tx.pg != nil {
		return tx.pg.exec(ctx, query, plainArgs(args))
	}
	return tx.lite.exec(tx.ctx, query, args...)
}

// execLater runs a write whose result nobody reads; on PostgreSQL it waits
// to travel with the transaction's next round trip (see pipeline).
func (tx *Tx) execLater(ctx context.Context, query string, args ...any) error {
	if tx.pg != nil {
		return tx.pg.execLater(ctx, query, plainArgs(args))
	}
	_, err := tx.exec(ctx, query, args...)
	return err
}

func (tx *Tx) query(ctx context.Context, query string, args ...any) (rowsScanner, error) {
	if tx.pg != nil {
		return tx.pg.query(ctx, query, plainArgs(args))
	}
	return tx.lite.query(tx.ctx, query, args...)
}

func (tx *Tx) queryRow(ctx context.Context, query string, args ...any) rowScanner {
	if tx.pg != nil {
		return tx.pg.queryRow(ctx, query, plainArgs(args))
	}
	return tx.lite.queryRow(tx.ctx, query, args...)
}

// pieces cuts n rows into consecutive [start, end) pieces whose sizes are
// powers of two no larger than max (itself a power of two). A multi-row
// statement then comes in a handful of shapes, each prepared once and kept
// by the driver (the statement cache here on SQLite, pgx's cache on each
// PostgreSQL connection), instead of one text per row count, each of
// which cost a parse (and on PostgreSQL a plan and a round trip) the first
// time a connection met it.
func pieces(n, max int) [][2]int {
	var out [][2]int
	for start := 0; start < n; {
		size := max
		for size > n-start {
			size /= 2
		}
		out = append(out, [2]int{start, start + size})
		start += size
	}
	return out
}

func plainArgs(args []any) []any {
	for i, a := range args {
		args[i] = plain(a)
	}
	return args
}

// wexec runs a single write statement outside an explicit transaction.
func (s *Store) wexec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	var res sql.Result
	var err error
	if s.wr != nil {
		res, err = s.wr.run(ctx, query, args...)
	} else {
		res, err = s.w.ExecContext(ctx, query, plainArgs(args)...)
	}
	if err = classify(err); err == nil || errors.Is(err, domain.ErrStorageUnavailable) {
		s.health.observe(err, s.now())
	}
	return res, err
}

// run runs a single write statement whose result nobody reads; what
// names it in the error.
func (s *Store) run(ctx context.Context, what, query string, args ...any) error {
	if _, err := s.wexec(ctx, query, args...); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

func (s *Store) rquery(ctx context.Context, query string, args ...any) (rowsScanner, error) {
	st := s.prep(ctx, query)
	if st.r != nil {
		return st.r.QueryContext(ctx, st.args(args)...)
	}
	return s.r.QueryContext(ctx, st.sql, st.args(args)...)
}

func (s *Store) rqueryRow(ctx context.Context, query string, args ...any) rowScanner {
	st := s.prep(ctx, query)
	if st.r != nil {
		return st.r.QueryRowContext(ctx, st.args(args)...)
	}
	return s.r.QueryRowContext(ctx, st.sql, st.args(args)...)
}

// plain turns the domain's typed strings into the text they are stored as,
// so that queries may take them as they are whatever the driver accepts.
func plain(v any) any {
	switch v := v.(type) {
	case domain.Status:
		return string(v)
	case domain.Channel:
		return string(v)
	case domain.Environment:
		return string(v)
	case ledger.Kind:
		return string(v)
	}
	return v
}
