package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// WriteGroup runs fns as one group, as concurrent Writes that met in the
// queue would: tests decide exactly what shares a transaction.
func (s *Store) WriteGroup(ctx context.Context, fns []func(tx *Tx) error) ([]error, error) {
	return s.writeGroup(ctx, fns)
}

// Pieces is pieces, for its test.
var Pieces = pieces

// MigrateTo applies the migrations up to a version, for tests of one.
func (s *Store) MigrateTo(ctx context.Context, version int64) error { return s.migrate(ctx, version) }

// Exec runs a statement outside the write queue, for tests that set up
// rows as an older version left them.
func (s *Store) Exec(ctx context.Context, query string, args ...any) error {
	_, err := s.wexec(ctx, query, args...)
	return err
}

// CountRows counts the rows of a table, for tests of what a write leaves.
func (s *Store) CountRows(ctx context.Context, table string) (int, error) {
	var n int
	err := s.rqueryRow(ctx, `SELECT COUNT(*) FROM `+table).Scan(&n)
	return n, err
}

// ExplainUsage is the plan of UsageByDay's query for q, as the engine
// describes it.
func (s *Store) ExplainUsage(ctx context.Context, q domain.UsageQuery) (string, error) {
	query, args := usageByDay(q)
	explain := "EXPLAIN "
	if s.dialect == SQLite {
		explain = "EXPLAIN QUERY PLAN "
	}
	rows, err := s.rquery(ctx, explain+query, args...)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	n := 1 // PostgreSQL: the plan's lines
	if s.dialect == SQLite {
		n = 4 // id, parent, notused, detail
	}
	var out []string
	for rows.Next() {
		vals := make([]any, n)
		ptrs := make([]any, n)
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return "", err
		}
		out = append(out, fmt.Sprint(vals[len(vals)-1]))
	}
	return strings.Join(out, "\n"), rows.Err()
}

// QueryStrings runs a query whose rows are one text column, for tests that
// read what the engine says of itself (PRAGMA checks, catalogs).
func (s *Store) QueryStrings(ctx context.Context, query string, args ...any) ([]string, error) {
	rows, err := s.w.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// DefaultedColumn is a column an insert may leave to its DEFAULT, and the
// kind of value its zero writes: "text" (the empty string), "number" (0)
// or "null".
type DefaultedColumn struct{ Table, Column, Zero string }

// DefaultedColumns lists the columns of the tables written in batches
// that inserts may leave out (table.withDefaults).
func DefaultedColumns() []DefaultedColumn {
	var out []DefaultedColumn
	out = appendDefaulted(out, messages)
	out = appendDefaulted(out, events)
	return appendDefaulted(out, ledgerLines)
}

func appendDefaulted[T any](out []DefaultedColumn, t table[T]) []DefaultedColumn {
	var zero T
	args := t.args(&zero, nil)
	for i, name := range t.names {
		if t.defaulted == nil || !t.defaulted[i] {
			continue
		}
		v := args[i]
		kind := fmt.Sprintf("unexpected %T", v)
		switch v.(type) {
		case string:
			kind = "text"
		case int, int64:
			kind = "number"
		default:
			if zeroArg(v) {
				kind = "null" // nil, or a NULL-able value that is not valid
			}
		}
		out = append(out, DefaultedColumn{t.name, name, kind})
	}
	return out
}

// ParkedCheckEvery is parkedCheckEvery, for tests that move a clock past it.
const ParkedCheckEvery = parkedCheckEvery

// Exec runs a statement in the transaction, for tests of what a write
// the store has no method for does.
func (tx *Tx) Exec(ctx context.Context, query string, args ...any) error {
	_, err := tx.exec(ctx, query, args...)
	return err
}
