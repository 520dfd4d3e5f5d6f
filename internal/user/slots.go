package user

import (
	"context"
	"time"
)

// Slots bounds the password hashes running at once in the process. One
// argon2id hash takes its memory cost (64 MiB at the recommended cost) for
// tens of milliseconds: every front that hashes a password (panel logins,
// SMPP binds, new SMPP users) takes a slot of one shared Slots, so that
// together they cannot take more memory than the slots allow.
type Slots struct{ ch chan struct{} }

// NewSlots makes n slots (at least one).
func NewSlots(n int) *Slots { return &Slots{ch: make(chan struct{}, max(n, 1))} }

// Acquire takes a slot, waiting at most wait (and no longer than ctx); it
// reports whether it got one. Every true is followed by one Release.
func (s *Slots) Acquire(ctx context.Context, wait time.Duration) bool {
	select {
	case s.ch <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case s.ch <- struct{}{}:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}

// Release gives back a slot taken by Acquire.
func (s *Slots) Release() { <-s.ch }

// Size is how many hashes may run at once.
func (s *Slots) Size() int { return cap(s.ch) }
