// Package txn lets each job of the send engine (intake, dispatch, tracking)
// see a write transaction as the narrow interface it declares, rather than
// as the storage's whole transaction type: a test then fakes only that part.
package txn

import "context"

// Writer runs fn in a write transaction, seen as T, and returns once it is
// committed; concurrent callers may share one transaction.
type Writer[T any] interface {
	Write(ctx context.Context, fn func(tx T) error) error
}

// source is a storage that writes in transactions of its own type S.
type source[S any] interface {
	Write(ctx context.Context, fn func(tx S) error) error
}

// As is a Writer that hands fn the transactions of w seen through view
// (usually the identity, converting the storage's transaction to the
// interface a job declares).
func As[T, S any](w source[S], view func(S) T) Writer[T] {
	return viewed[T, S]{w: w, view: view}
}

type viewed[T, S any] struct {
	w    source[S]
	view func(S) T
}

func (v viewed[T, S]) Write(ctx context.Context, fn func(tx T) error) error {
	return v.w.Write(ctx, func(tx S) error { return fn(v.view(tx)) })
}
