// Package simulator is the built-in provider: it plays a carrier and a
// handset for test keys and for dev, with outcomes chosen by the last four
// digits of the recipient (docs/api.md, test mode).
package simulator

import (
	"container/heap"
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// Name is the provider name the simulator reports in webhooks.
const Name = "simulator"

// Test number endings.
const (
	EndInvalid    = "0001" // FAILED INVALID_NUMBER, never accepted
	EndProviderKO = "0002" // SENT, then FAILED PROVIDER_ERROR
	EndNoRCS      = "0003" // device without RCS
	EndReplies    = "0004" // after DELIVERED the recipient answers "OK"
	EndSilent     = "0005" // stays SENT until its validity ends
)

// Stale is what recovery reads: messages this simulator took but whose
// story did not finish, because the process stopped in between.
type Stale interface {
	StaleMessages(ctx context.Context, provider string, before time.Time, skipSuffix string, limit int) ([]domain.Message, error)
}

// Config sets up a Simulator.
type Config struct {
	Sink  provider.Sink
	Stale Stale
	// Delay between simulated steps (MSGSVC_SIMULATOR_DELAY).
	Delay time.Duration
	Now   func() time.Time
	Log   *slog.Logger
	// Journal, when set, keeps the carrier's side of every hand-over in
	// storage (MSGSVC_SIMULATOR_JOURNAL), so tests with several nodes can
	// see what the carrier received and from which node.
	Journal Journal
	// Node names this process in the journal.
	Node string
}

// Journal records hand-overs; it returns the ids seen for the first time.
type Journal interface {
	JournalSubmissions(ctx context.Context, node string, ids []string, at time.Time) (map[string]bool, error)
}

// Simulator is a provider.Provider.
type Simulator struct {
	cfg   Config
	mu    sync.Mutex
	queue timeline
	wake  chan struct{}

	capCalls, capNumbers atomic.Int64
}

// New builds a Simulator; Run plays the scheduled reports.
func New(c Config) *Simulator {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Delay <= 0 {
		c.Delay = 300 * time.Millisecond
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	return &Simulator{cfg: c, wake: make(chan struct{}, 1)}
}

// Name implements provider.Provider.
func (s *Simulator) Name() string { return Name }

// Submit implements provider.Provider: it accepts or refuses at once and
// schedules what the network would report later.
func (s *Simulator) Submit(ctx context.Context, msgs []provider.Outbound) []provider.Result {
	out := make([]provider.Result, len(msgs))
	now := s.cfg.Now()
	var later []step
	for i, m := range msgs {
		switch {
		case strings.HasSuffix(m.To, EndInvalid):
			out[i].Err = &provider.Error{Code: domain.CodeInvalidNumber, Message: "the number does not exist on the network"}
			continue
		case m.Channel == domain.RCS && strings.HasSuffix(m.To, EndNoRCS):
			out[i].Err = &provider.Error{Code: domain.CodeRCSNotSupported, Message: "the recipient's device does not support RCS"}
			continue
		}
		out[i].Ref = m.ID
		later = append(later, story(m.ID, m.To, m.Channel, domain.Sent, now, s.cfg.Delay)...)
	}
	if s.cfg.Journal != nil {
		if err := s.journal(ctx, msgs, out, now); err != nil {
			// Like a carrier that did not answer: nothing was taken.
			for i := range out {
				if out[i].Err == nil {
					out[i] = provider.Result{Err: &provider.Error{Code: "PROVIDER_ERROR", Message: "journal: " + err.Error(), Temporary: true}}
				}
			}
			return out
		}
	}
	s.schedule(later)
	return out
}

// journal records the accepted hand-overs. A message seen before was
// handed over by a node that died before recording the carrier's answer;
// the carrier deduplicates it by our message id and answers as before.
func (s *Simulator) journal(ctx context.Context, msgs []provider.Outbound, out []provider.Result, now time.Time) error {
	var ids []string
	for i, m := range msgs {
		if out[i].Err == nil {
			ids = append(ids, m.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	fresh, err := s.cfg.Journal.JournalSubmissions(ctx, s.cfg.Node, ids, now)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if !fresh[id] {
			s.cfg.Log.Info("simulator deduplicated a resubmitted message", "message", id, "node", s.cfg.Node)
		}
	}
	return nil
}

// The simulator checks devices for RCS: numbers ending in EndNoRCS have none.
var _ provider.CapabilityChecker = (*Simulator)(nil)

// Capabilities tells which numbers can receive RCS: every one but the
// numbers ending in EndNoRCS (a phone without RCS).
func (s *Simulator) Capabilities(ctx context.Context, numbers []string) map[string]bool {
	s.capCalls.Add(1)
	s.capNumbers.Add(int64(len(numbers)))
	out := make(map[string]bool, len(numbers))
	for _, n := range numbers {
		out[n] = !strings.HasSuffix(n, EndNoRCS)
	}
	return out
}

// CapabilityChecks reports how often Capabilities was asked, and about how
// many numbers in all (tests check that answers are cached).
func (s *Simulator) CapabilityChecks() (calls, numbers int64) {
	return s.capCalls.Load(), s.capNumbers.Load()
}

// story returns the steps that follow a message's current status.
func story(id, to string, channel domain.Channel, status domain.Status, from time.Time, d time.Duration) []step {
	read := channel.HasReadReceipts()
	switch {
	case strings.HasSuffix(to, EndSilent):
		return nil
	case strings.HasSuffix(to, EndProviderKO):
		if status == domain.Sent {
			return []step{{at: from.Add(d), status: provider.Status{MessageID: id, Status: domain.Failed, ErrorCode: domain.CodeProviderError,
				ErrorMessage: "the carrier could not deliver the message"}}}
		}
		return nil
	}
	var out []step
	at := from
	if status == domain.Sent {
		at = at.Add(d)
		out = append(out, step{at: at, status: provider.Status{MessageID: id, Status: domain.Delivered}})
		if strings.HasSuffix(to, EndReplies) {
			out = append(out, step{at: at.Add(d / 2), reply: &provider.Inbound{ReplyTo: id, From: to, Channel: channel, Body: "OK"}})
		}
	}
	if read && (status == domain.Sent || status == domain.Delivered) {
		out = append(out, step{at: at.Add(d), status: provider.Status{MessageID: id, Status: domain.Read}})
	}
	return out
}

func (s *Simulator) schedule(steps []step) {
	if len(steps) == 0 {
		return
	}
	s.mu.Lock()
	for _, st := range steps {
		heap.Push(&s.queue, st)
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Run plays scheduled reports until ctx ends, and every few seconds picks
// up the stories that a previous process left unfinished.
func (s *Simulator) Run(ctx context.Context) {
	recover := time.NewTicker(max(5*time.Second, 10*s.cfg.Delay))
	defer recover.Stop()
	s.Recover(ctx)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := s.cfg.Now()
		due, next := s.pop(now)
		if len(due) > 0 {
			s.play(ctx, due)
			continue
		}
		wait := time.Hour
		if !next.IsZero() {
			wait = next.Sub(now)
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-timer.C:
		case <-recover.C:
			s.Recover(ctx)
		}
	}
}

// pop takes every step due at now, and tells when the next one is due.
func (s *Simulator) pop(now time.Time) ([]step, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var due []step
	for s.queue.Len() > 0 && !s.queue[0].at.After(now) && len(due) < 1024 {
		due = append(due, heap.Pop(&s.queue).(step))
	}
	if s.queue.Len() > 0 {
		return due, s.queue[0].at
	}
	return due, time.Time{}
}

// play reports the due steps: the statuses first, then the replies, so
// that a reply due together with the DELIVERED it follows (a late wake-up
// under load) is still recorded after it.
func (s *Simulator) play(ctx context.Context, due []step) {
	var statuses []provider.Status
	var replies []provider.Inbound
	now := s.cfg.Now().UTC()
	for _, st := range due {
		if st.reply != nil {
			r := *st.reply
			r.At = now
			replies = append(replies, r)
			continue
		}
		st.status.At = now
		statuses = append(statuses, st.status)
	}
	if len(statuses) > 0 {
		if err := s.cfg.Sink.Statuses(ctx, Name, statuses); err != nil && ctx.Err() == nil {
			// The stories are re-read from storage by Recover.
			s.cfg.Log.Error("simulated reports", "err", err)
		}
	}
	for _, r := range replies {
		if err := s.cfg.Sink.Inbound(ctx, Name, r); err != nil && ctx.Err() == nil {
			s.cfg.Log.Error("simulated reply", "err", err)
		}
	}
}

// Recover schedules the rest of the story of messages this simulator took
// but never finished, e.g. because the service was killed. Reports that
// were in fact already applied are harmless: statuses only move forward.
func (s *Simulator) Recover(ctx context.Context) {
	if s.cfg.Stale == nil {
		return
	}
	before := s.cfg.Now().Add(-3*s.cfg.Delay - 2*time.Second)
	msgs, err := s.cfg.Stale.StaleMessages(ctx, Name, before, EndSilent, 1000)
	if err != nil {
		if ctx.Err() == nil {
			s.cfg.Log.Error("simulator recovery", "err", err)
		}
		return
	}
	now := s.cfg.Now()
	var steps []step
	for _, m := range msgs {
		steps = append(steps, story(m.ID, m.To, m.Channel, m.Status, now.Add(-s.cfg.Delay), s.cfg.Delay)...)
	}
	s.schedule(steps)
}

// step is one scheduled report or reply.
type step struct {
	at     time.Time
	status provider.Status
	reply  *provider.Inbound
}

// timeline is a min-heap of steps by time.
type timeline []step

func (t timeline) Len() int           { return len(t) }
func (t timeline) Less(i, j int) bool { return t[i].at.Before(t[j].at) }
func (t timeline) Swap(i, j int)      { t[i], t[j] = t[j], t[i] }
func (t *timeline) Push(x any)        { *t = append(*t, x.(step)) }
func (t *timeline) Pop() any {
	old := *t
	n := len(old)
	x := old[n-1]
	*t = old[:n-1]
	return x
}
