package message

import (
	"context"
	"time"
)

// Handoff is a queue of this node that takes rows written already leased
// to it (lease.Queue is one). Rows are written leased to Owner until their
// write time plus Lease, as a claim would leave them, and given to Hand
// after the commit: they cost no claim, and no other node takes them while
// this one handles them; if this node dies, the lease runs out and any
// node claims them from the table. Hand releases to the table at once
// what it cannot take.
type Handoff[T any] interface {
	Owner() string
	Lease() time.Duration
	Hand(ctx context.Context, items []T) int
}
