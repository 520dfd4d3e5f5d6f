package store

import "context"

// WriteGroup runs fns as one group, as concurrent Writes that met in the
// queue would: tests decide exactly what shares a transaction.
func (s *Store) WriteGroup(ctx context.Context, fns []func(tx *Tx) error) ([]error, error) {
	return s.writeGroup(ctx, fns)
}

// Pieces is pieces, for its test.
var Pieces = pieces
