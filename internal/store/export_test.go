package store

import "context"

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
