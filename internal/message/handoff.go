package message

import (
	"context"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/lease"
)

// Handoff is a queue of this node that takes rows written already leased
// to it (see lease.Handoff).
type Handoff[T any] = lease.Handoff[T]

// handOff gives newly written leased messages to the local dispatcher.
func (s *Service) handOff(ctx context.Context, msgs []domain.Message) {
	if len(msgs) > 0 {
		s.dispatch.Hand(ctx, msgs)
	}
}
