package e2e

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// target is the node the integrators talk to; a test that restarts the
// node points it at the new process.
type target struct {
	mu  sync.Mutex
	api *apiClient
}

func newTarget(api *apiClient) *target { return &target{api: api} }

func (t *target) get() *apiClient {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.api
}

// set points the integrators at api and drops the old client's connections.
func (t *target) set(api *apiClient) {
	t.mu.Lock()
	old := t.api
	t.api = api
	t.mu.Unlock()
	old.close()
}

// integrators is a sustained load of sends the way a careful integrator
// makes them: every request carries its own Idempotency-Key and is sent
// again, with the same key, until it gets an answer. A node killed in the
// middle or a database that went away costs retries; a send must never be
// lost (no answer ever) nor doubled (two campaigns for one key).
type integrators struct {
	reqs []sendRequest
	loadOptions
	book *sendBook
	to   *target
	// retryFor bounds how long one request keeps being retried.
	retryFor time.Duration

	done      atomic.Int64 // requests answered 202
	retries   atomic.Int64 // attempts that got no answer or a 5xx
	replays   atomic.Int64 // 202 answers marked Idempotent-Replayed
	noAnswer  atomic.Int64 // attempts without an HTTP answer
	serverErr atomic.Int64 // attempts answered 5xx

	mu        sync.Mutex
	problems  []string
	campaigns map[string]string // Idempotency-Key -> campaignId of its first 202
	finished  chan struct{}
}

// loadOptions shape the integrators' traffic.
type loadOptions struct {
	senders int    // concurrent integrators
	keyBase string // makes the Idempotency-Keys unique to the run
	// pace, when set, is the least time between the starts of two requests
	// of one integrator, so that a load lasts long enough for a test's
	// phases.
	pace time.Duration
	// observe, when set, sees every attempt that got an answer: its
	// status, headers and how long it took.
	observe func(code int, h http.Header, took time.Duration)
}

// startIntegrators sends every request of reqs through to, recording 202
// answers in book.
func startIntegrators(ctx context.Context, reqs []sendRequest, to *target, book *sendBook, o loadOptions) *integrators {
	in := &integrators{reqs: reqs, loadOptions: o, book: book, to: to, retryFor: 90 * time.Second,
		campaigns: map[string]string{}, finished: make(chan struct{})}
	queue := make(chan int, len(reqs))
	for i := range reqs {
		queue <- i
	}
	close(queue)
	var wg sync.WaitGroup
	for range o.senders {
		wg.Go(func() {
			for i := range queue {
				next := time.Now().Add(o.pace)
				in.sendOne(ctx, i)
				select {
				case <-ctx.Done():
				case <-time.After(time.Until(next)):
				}
			}
		})
	}
	go func() { wg.Wait(); close(in.finished) }()
	return in
}

func (in *integrators) problem(format string, args ...any) {
	in.mu.Lock()
	in.problems = append(in.problems, fmt.Sprintf(format, args...))
	in.mu.Unlock()
}

// sendOne sends request i until it is accepted, with the same key on
// every try. The pause between tries is an integrator's back-off, not a
// wait for an outcome.
func (in *integrators) sendOne(ctx context.Context, i int) {
	key := fmt.Sprintf("%s-%d", in.keyBase, i)
	deadline := time.Now().Add(in.retryFor)
	var last string
	for try := 0; time.Now().Before(deadline) && ctx.Err() == nil; try++ {
		if try > 0 {
			in.retries.Add(1)
			select {
			case <-ctx.Done():
			case <-time.After(time.Duration(min(try, 10)) * 50 * time.Millisecond):
			}
		}
		start := time.Now()
		code, resp, raw, h, err := in.to.get().sendOnce(ctx, in.reqs[i], key)
		if err == nil && in.observe != nil {
			in.observe(code, h, time.Since(start))
		}
		switch {
		case err != nil:
			in.noAnswer.Add(1)
			last = err.Error()
			continue
		case code >= 500:
			in.serverErr.Add(1)
			last = fmt.Sprintf("%d %s", code, raw)
			continue
		case code != http.StatusAccepted:
			in.problem("request %d (key %s): %d %s", i, key, code, raw)
			return
		}
		if err := checkAccepted(in.reqs[i], resp); err != nil {
			in.problem("request %d: %v", i, err)
			return
		}
		if h.Get("Idempotent-Replayed") == "true" {
			in.replays.Add(1)
		}
		in.mu.Lock()
		first, seen := in.campaigns[key]
		if !seen {
			in.campaigns[key] = resp.CampaignID
		}
		in.mu.Unlock()
		if seen && first != resp.CampaignID {
			in.problem("key %s answered with campaign %s and later %s: the send was doubled", key, first, resp.CampaignID)
		}
		in.book.accept(resp)
		in.done.Add(1)
		return
	}
	in.problem("request %d (key %s): no 202 within %v; last: %s", i, key, in.retryFor, last)
}

// waitDone waits until n requests were accepted, or every request was
// answered, or timeout passed; it reports whether n were accepted.
func (in *integrators) waitDone(ctx context.Context, n int64, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for in.done.Load() < n {
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-in.finished:
			return in.done.Load() >= n
		case <-time.After(20 * time.Millisecond):
		}
	}
	return true
}

// wait waits until every request was answered or timeout passed.
func (in *integrators) wait(timeout time.Duration) bool {
	select {
	case <-in.finished:
		return true
	case <-time.After(timeout):
		return false
	}
}

// report returns the problems seen, sorted, and a summary line.
func (in *integrators) report() ([]string, string) {
	in.mu.Lock()
	p := slices.Clone(in.problems)
	in.mu.Unlock()
	sort.Strings(p)
	return p, fmt.Sprintf("%d of %d requests accepted; %d retried attempts (%d without an answer, %d answered 5xx); %d answers replayed",
		in.done.Load(), len(in.reqs), in.retries.Load(), in.noAnswer.Load(), in.serverErr.Load(), in.replays.Load())
}
