package providertest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/msgsvc/msgsvc/internal/polltest"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// Sink records what an adapter reports, and can be told to fail. The zero
// value is ready; it is safe for concurrent use.
type Sink struct {
	// Provider, when set, is the only provider name the sink takes
	// reports for: a report under another name fails, so that a test sees
	// an adapter that reports under the wrong name.
	Provider string

	mu           sync.Mutex
	statuses     []provider.Status
	inbound      []provider.Inbound
	fail         error
	failStatuses int
	failInbound  int
	onInbound    func(provider.Inbound)
	// log is every Expect and Statuses call in order, as "expect REF" and
	// "status REF", so a test can see which came first.
	log []string
}

var (
	_ provider.Sink     = (*Sink)(nil)
	_ provider.Expecter = (*Sink)(nil)
)

// Expect records a provider's announcement of a reference.
func (s *Sink) Expect(name, ref string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, "expect "+ref)
}

// Log returns the Expect and Statuses calls in the order they came.
func (s *Sink) Log() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log...)
}

// ErrStorageDown is what the sink answers when told to fail a number of
// reports.
var ErrStorageDown = errors.New("storage down")

// Statuses records reports, unless told to fail.
func (s *Sink) Statuses(_ context.Context, name string, reports []provider.Status) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(name); err != nil {
		return err
	}
	if s.failStatuses > 0 {
		s.failStatuses--
		return ErrStorageDown
	}
	s.statuses = append(s.statuses, reports...)
	for _, r := range reports {
		s.log = append(s.log, "status "+r.Ref)
	}
	return nil
}

// Inbound records a message, unless told to fail. The OnInbound hook runs
// first, outside the sink's lock, whether or not it fails.
func (s *Sink) Inbound(_ context.Context, name string, in provider.Inbound) error {
	s.mu.Lock()
	hook := s.onInbound
	err := s.check(name)
	if err == nil && s.failInbound > 0 {
		s.failInbound--
		err = ErrStorageDown
	}
	s.mu.Unlock()
	if hook != nil {
		hook(in)
	}
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.inbound = append(s.inbound, in)
	s.mu.Unlock()
	return nil
}

func (s *Sink) check(name string) error {
	if s.Provider != "" && name != s.Provider {
		return fmt.Errorf("report from provider %q; this sink takes %q", name, s.Provider)
	}
	return s.fail
}

// Fail makes every report fail with err until Fail(nil).
func (s *Sink) Fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = err
}

// FailStatuses makes the next n Statuses calls fail with ErrStorageDown.
func (s *Sink) FailStatuses(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failStatuses = n
}

// FailInbound makes the next n Inbound calls fail with ErrStorageDown.
func (s *Sink) FailInbound(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failInbound = n
}

// OnInbound calls f with every inbound message handed over.
func (s *Sink) OnInbound(f func(provider.Inbound)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onInbound = f
}

// Got returns copies of the statuses and inbound messages recorded.
func (s *Sink) Got() ([]provider.Status, []provider.Inbound) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]provider.Status(nil), s.statuses...), append([]provider.Inbound(nil), s.inbound...)
}

// WaitStatus polls until a recorded status matches, and returns it; the
// test fails after 10 seconds.
func (s *Sink) WaitStatus(t testing.TB, what string, match func(provider.Status) bool) provider.Status {
	t.Helper()
	var found provider.Status
	polltest.Until(t, what, func() bool {
		sts, _ := s.Got()
		for _, st := range sts {
			if match(st) {
				found = st
				return true
			}
		}
		return false
	})
	return found
}
