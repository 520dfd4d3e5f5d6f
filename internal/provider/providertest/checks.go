package providertest

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/polltest"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// promptly bounds what must not block: a Submit, a Stop.
const promptly = 10 * time.Second

func submit(t *testing.T, p provider.Provider, msgs ...provider.Outbound) []provider.Result {
	t.Helper()
	return submitWithin(t, promptly, p, msgs...)
}

// submitWithin hands over with a deadline, as the dispatcher does (an
// adapter may retry a temporary refusal until the deadline).
func submitWithin(t *testing.T, d time.Duration, p provider.Provider, msgs ...provider.Outbound) []provider.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	out := p.Submit(ctx, msgs)
	if len(out) != len(msgs) {
		t.Fatalf("Submit of %d messages returned %d results", len(msgs), len(out))
	}
	return out
}

func accepted(t *testing.T, what string, r provider.Result) {
	t.Helper()
	if r.Err != nil {
		t.Fatalf("%s: refused: %+v", what, *r.Err)
	}
	if r.Ref == "" {
		t.Fatalf("%s: taken without a Ref", what)
	}
	if len(r.Parts) > 0 && r.Parts[0] != r.Ref {
		t.Fatalf("%s: Parts %v do not start with the Ref %q", what, r.Parts, r.Ref)
	}
}

func testName(t *testing.T, h Harness) {
	in := h.New(t, &Sink{})
	a := in.Adapter
	name := a.Name()
	if name == "" || name != h.Name {
		t.Fatalf("Name() = %q; the harness named it %q", name, h.Name)
	}
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = a.Stop(context.Background()) }()
	submit(t, a, in.Accept(0))
	if a.Name() != name {
		t.Fatalf("Name() changed from %q to %q", name, a.Name())
	}
}

// testResults hands over a batch with a refused message in the middle:
// the refusal must sit at its own index.
func testResults(t *testing.T, h Harness) {
	in := start(t, h, nil)
	msgs := []provider.Outbound{in.Accept(0), in.Accept(1), in.Permanent(), in.Accept(2), in.Accept(3)}
	out := submit(t, in.Adapter, msgs...)
	refs := map[string]bool{}
	for i, r := range out {
		if i == 2 {
			if r.Err == nil || r.Err.Temporary {
				t.Fatalf("result 2 is the permanently refused message's; got %+v", r)
			}
			continue
		}
		accepted(t, msgs[i].ID, r)
		if refs[r.Ref] {
			t.Fatalf("Ref %q given to two messages", r.Ref)
		}
		refs[r.Ref] = true
	}
}

func testParts(t *testing.T, h Harness) {
	in := start(t, h, nil)
	if in.Long == nil {
		t.Skip("this adapter hands every message over whole")
	}
	r := submit(t, in.Adapter, in.Long())[0]
	accepted(t, "long message", r)
	if len(r.Parts) < 2 {
		t.Fatalf("a long message went in %d parts: %+v", len(r.Parts), r)
	}
}

// testReports checks that the final report of a message taken reaches the
// sink under the adapter's name and names the message by one of its ids.
func testReports(t *testing.T, h Harness) {
	sink := &Sink{Provider: h.Name}
	in := start(t, h, sink)
	m := in.Accept(0)
	r := submit(t, in.Adapter, m)[0]
	accepted(t, "message", r)
	if in.Report != nil {
		in.Report(t, m, r)
	}
	st := sink.WaitStatus(t, "the message's final report", func(st provider.Status) bool {
		mine := st.MessageID == m.ID || (st.Ref != "" && (st.Ref == r.Ref || slices.Contains(r.Parts, st.Ref)))
		return mine && (st.Status == domain.Delivered || st.Status == domain.Read || st.Status == domain.Failed)
	})
	if st.At.IsZero() {
		t.Errorf("report without a time: %+v", st)
	}
}

func testRefusals(t *testing.T, h Harness) {
	in := start(t, h, nil)
	r := submit(t, in.Adapter, in.Permanent())[0]
	if r.Err == nil || r.Err.Temporary || r.Err.Code == "" {
		t.Fatalf("a permanent refusal must be a provider.Error with a Code and not Temporary; got %+v (err %+v)", r, r.Err)
	}
	r = submitWithin(t, time.Second, in.Adapter, in.Temporary())[0]
	if r.Err == nil || !r.Err.Temporary {
		t.Fatalf("a temporary refusal must be a Temporary provider.Error; got %+v (err %+v)", r, r.Err)
	}
}

// testCancelled hands over with a context already cancelled: Submit must
// return at once, and must not fail any message for good on that account.
func testCancelled(t *testing.T, h Harness) {
	in := start(t, h, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	done := make(chan []provider.Result, 1)
	go func() { done <- in.Adapter.Submit(ctx, []provider.Outbound{in.Accept(0), in.Accept(1)}) }()
	select {
	case out := <-done:
		if len(out) != 2 {
			t.Fatalf("%d results for 2 messages", len(out))
		}
		for i, r := range out {
			if r.Err != nil && !r.Err.Temporary {
				t.Errorf("result %d: a cancelled hand-over failed the message for good: %+v", i, *r.Err)
			}
		}
	case <-time.After(promptly):
		t.Fatal("Submit with a cancelled context did not return")
	}
}

func testLifecycle(t *testing.T, h Harness) {
	in := h.New(t, &Sink{})
	a := in.Adapter
	ctx := context.Background()
	for i := range 2 {
		if err := a.Start(ctx); err != nil {
			t.Fatalf("Start #%d: %v", i+1, err)
		}
	}
	accepted(t, "message after two Starts", submit(t, a, in.Accept(0))[0])
	for i := range 2 {
		sctx, cancel := context.WithTimeout(ctx, promptly)
		began := time.Now()
		err := a.Stop(sctx)
		cancel()
		if err != nil {
			t.Fatalf("Stop #%d: %v", i+1, err)
		}
		if d := time.Since(began); d > promptly/2 {
			t.Fatalf("Stop #%d took %v", i+1, d)
		}
	}
}

func testHealth(t *testing.T, h Harness) {
	in := start(t, h, nil)
	accepted(t, "message", submit(t, in.Adapter, in.Accept(0))[0])
	polltest.Until(t, "Health to report ready after a message was taken", func() bool { return in.Adapter.Health().Ready })
	if in.Adapter.Health().Detail == "" {
		t.Fatal("Health has no detail for /readyz")
	}
}

// testCapabilities checks that each capability the adapter offers, as
// CapabilitiesOf finds it by its interfaces, answers. What an adapter
// offers is declared by the compile-time guards of its package.
func testCapabilities(t *testing.T, h Harness) {
	in := start(t, h, nil)
	caps := provider.CapabilitiesOf(in.Adapter)
	m := in.Accept(0)
	r := submit(t, in.Adapter, m)[0]
	accepted(t, "message", r)
	ctx, cancel := context.WithTimeout(context.Background(), promptly)
	defer cancel()
	if caps.Querier != nil {
		if _, err := caps.Querier.Query(ctx, []provider.QueryRef{{Ref: r.Ref, From: m.From}}); err != nil {
			t.Errorf("Query: %v", err)
		}
	}
	if caps.Revoker != nil {
		if got := caps.Revoker.Revoke(ctx, []provider.Outbound{m}); len(got) != 1 {
			t.Errorf("Revoke of one message answered %d times", len(got))
		}
	}
	if caps.Checker != nil {
		caps.Checker.Capabilities(ctx, []string{m.To})
	}
	if caps.Chunker != nil && caps.ChunkSize() < 1 {
		t.Errorf("HandOverChunk() = %d", caps.Chunker.HandOverChunk())
	}
	for _, rt := range h.Type.Webhooks {
		if rt.Handler(in.Adapter) == nil {
			t.Errorf("the type's webhook route %s %s has no receiver on the adapter", rt.Method, h.Type.PathOf(rt))
		}
	}
}

func testConcurrent(t *testing.T, h Harness) {
	in := start(t, h, nil)
	const callers, each = 6, 4
	var wg sync.WaitGroup
	results := make([][]provider.Result, callers)
	for c := range callers {
		msgs := make([]provider.Outbound, each)
		for i := range msgs {
			msgs[i] = in.Accept(c*each + i)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), promptly)
			defer cancel()
			results[c] = in.Adapter.Submit(ctx, msgs)
		}()
	}
	wg.Wait()
	refs := map[string]bool{}
	for c, out := range results {
		if len(out) != each {
			t.Fatalf("caller %d: %d results for %d messages", c, len(out), each)
		}
		for _, r := range out {
			accepted(t, "concurrent message", r)
			if refs[r.Ref] {
				t.Fatalf("Ref %q given twice", r.Ref)
			}
			refs[r.Ref] = true
		}
	}
}
