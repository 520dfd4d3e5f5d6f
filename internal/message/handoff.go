package message

import (
	"context"
	"time"

	"msgsvc/internal/domain"
)

// DispatchHandoff passes accepted messages that are due at once to a
// dispatcher of this node in memory. They are written already leased to
// Owner for Lease, as a claim would leave them, so a send costs no claim
// and no other node takes them while this one hands them over; if this
// node dies, the lease runs out and any node claims them from the table.
type DispatchHandoff struct {
	Owner string
	Lease time.Duration
	// Enqueue takes the messages it has room for, in order, and returns
	// how many; the rest are released to the database queue at once.
	Enqueue func(msgs []domain.Message) int
	Release func(ctx context.Context, owner string, ids []string, now time.Time) error
}

// handOff gives newly written leased messages to the local dispatcher.
func (s *Service) handOff(ctx context.Context, msgs []domain.Message) {
	if len(msgs) == 0 {
		return
	}
	n := s.dispatch.Enqueue(msgs)
	if n == len(msgs) {
		return
	}
	rest := make([]string, 0, len(msgs)-n)
	for _, m := range msgs[n:] {
		rest = append(rest, m.ID)
	}
	// The dispatcher is saturated (or stopping): let any claim take the
	// rest now rather than when their lease runs out.
	if err := s.dispatch.Release(context.WithoutCancel(ctx), s.dispatch.Owner, rest, s.now()); err != nil {
		return // they are claimed when the lease runs out
	}
	s.wake()
}
