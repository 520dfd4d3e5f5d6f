package keycache

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/polltest"
)

// source is a database of one key whose version the test moves.
type source struct {
	version atomic.Int64
	lookups atomic.Int64
	revoked atomic.Bool
	// gate, when set, holds every version read until it is closed; started
	// is told each time a read begins.
	gate    chan struct{}
	started chan struct{}
}

func (s *source) AuthVersion(ctx context.Context) (int64, error) {
	v := s.version.Load() // as of when the read began
	if s.started != nil {
		s.started <- struct{}{}
	}
	if s.gate != nil {
		<-s.gate
	}
	return v, nil
}

func (s *source) KeyByHashVersion(_ context.Context, hash string) (domain.APIKey, domain.Account, int64, error) {
	s.lookups.Add(1)
	if hash != "h1" {
		return domain.APIKey{}, domain.Account{}, 0, domain.ErrNotFound
	}
	k := domain.APIKey{ID: "key_1", Hash: hash}
	if s.revoked.Load() {
		k.RevokedAt = time.Unix(1, 0)
	}
	return k, domain.Account{ID: "acc_1"}, s.version.Load(), nil
}

func TestCacheFollowsVersion(t *testing.T) {
	ctx := context.Background()
	src := &source{}
	src.version.Store(1)
	c := New(src)
	for i := 0; i < 5; i++ {
		k, a, err := c.KeyByHash(ctx, "h1")
		if err != nil || k.ID != "key_1" || a.ID != "acc_1" || !k.RevokedAt.IsZero() {
			t.Fatalf("lookup %d: %+v %+v %v", i, k, a, err)
		}
	}
	if n := src.lookups.Load(); n != 1 {
		t.Errorf("%d lookups of an unchanged key, want 1", n)
	}
	// A revocation moves the version: the next lookup reads the key again.
	src.revoked.Store(true)
	src.version.Store(2)
	k, _, err := c.KeyByHash(ctx, "h1")
	if err != nil || k.RevokedAt.IsZero() {
		t.Errorf("after the version moved: %+v %v, want the revoked key", k, err)
	}
	if n := src.lookups.Load(); n != 2 {
		t.Errorf("%d lookups, want 2", n)
	}
	// Unknown keys are not kept: each attempt asks the database.
	for i := 0; i < 2; i++ {
		if _, _, err := c.KeyByHash(ctx, "h-unknown"); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("unknown key: %v", err)
		}
	}
	if n := src.lookups.Load(); n != 4 {
		t.Errorf("%d lookups, want 4", n)
	}
}

// TestFreshReadStartsAfterCaller: a caller that arrives while a version
// read is under way must not take that read's answer (it may predate a
// change the caller has to see) but the next read's.
func TestFreshReadStartsAfterCaller(t *testing.T) {
	src := &source{gate: make(chan struct{}), started: make(chan struct{}, 2)}
	src.version.Store(1)
	f := &fresh{read: src.AuthVersion}
	ctx := context.Background()
	var first, second int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		first, _ = f.get(ctx)
	}()
	<-src.started // the first read began, with version 1
	src.version.Store(2)
	wg.Add(1)
	go func() {
		defer wg.Done()
		second, _ = f.get(ctx)
	}()
	// Wait until the second caller is queued for the next round.
	deadline := time.Now().Add(5 * time.Second)
	for {
		if f.waiters() != 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("second caller never queued")
		}
		time.Sleep(time.Millisecond)
	}
	close(src.gate)
	wg.Wait()
	if first != 1 || second != 2 {
		t.Errorf("first caller got %d (want 1), the caller that came during its read got %d (want 2)", first, second)
	}
}

// TestFreshSharesReads: the callers that arrive during one read share the
// next one.
func TestFreshSharesReads(t *testing.T) {
	src := &source{gate: make(chan struct{}), started: make(chan struct{}, 3)}
	f := &fresh{read: src.AuthVersion}
	ctx := context.Background()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _, _ = f.get(ctx) }()
	<-src.started
	const callers = 100
	for i := 0; i < callers; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); _, _ = f.get(ctx) }()
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := f.waiters()
		if n == callers {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d callers queued", n, callers)
		}
		time.Sleep(time.Millisecond)
	}
	close(src.gate)
	wg.Wait()
	if n := len(src.started); n != 1 {
		t.Errorf("%d more reads for %d callers that arrived during one read, want 1", n, callers)
	}
}

// KeyByHashCached answers a cached key without reading the counter, and
// says which counter value its answer is as of; an uncached key is read
// afresh and needs no check (version 0).
func TestCachedAnswerCarriesItsVersion(t *testing.T) {
	ctx := context.Background()
	src := &source{started: make(chan struct{}, 100)}
	src.version.Store(3)
	c := New(src)
	if _, _, v, err := c.KeyByHashCached(ctx, "h1"); err != nil || v != 0 {
		t.Fatalf("first lookup: version %d (%v), want 0 (read afresh)", v, err)
	}
	reads := len(src.started)
	src.version.Store(4) // a change the cache has not seen
	k, _, v, err := c.KeyByHashCached(ctx, "h1")
	if err != nil || k.ID != "key_1" || v != 3 {
		t.Fatalf("cached lookup: %+v version %d (%v), want key_1 as of 3", k, v, err)
	}
	if len(src.started) != reads {
		t.Errorf("the cached answer read the counter")
	}
	if _, _, err := c.KeyByHash(ctx, "h1"); err != nil {
		t.Fatal(err)
	}
	if _, _, v, _ := c.KeyByHashCached(ctx, "h1"); v != 4 {
		t.Errorf("after a fresh lookup the cached answer is as of %d, want 4", v)
	}
	if _, _, _, err := c.KeyByHashCached(ctx, "h-unknown"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("unknown key: %v", err)
	}
}

// reads records when each version read began.
type reads struct {
	mu     sync.Mutex
	starts []time.Time
	v      atomic.Int64
}

func (r *reads) AuthVersion(context.Context) (int64, error) {
	r.mu.Lock()
	r.starts = append(r.starts, time.Now())
	r.mu.Unlock()
	return r.v.Load(), nil
}

// TestCounterSpacesReads: with a gap, reads start at least that far apart,
// callers share them, and each caller still sees a change made before it
// asked.
func TestCounterSpacesReads(t *testing.T) {
	const gap = 20 * time.Millisecond
	src := &reads{}
	c := NewCounter(src.AuthVersion, gap)
	ctx := context.Background()
	for i := int64(1); i <= 5; i++ {
		src.v.Store(i)
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				if v, err := c.Get(ctx); err != nil || v != i {
					t.Errorf("Get = %d, %v after the counter moved to %d", v, err, i)
				}
			})
		}
		wg.Wait()
	}
	src.mu.Lock()
	defer src.mu.Unlock()
	if len(src.starts) > 5*20/2 {
		t.Errorf("%d reads for 100 callers in 5 bursts: not shared", len(src.starts))
	}
	// The loop times the gap from its own clock reading just before each
	// read; the source stamps the read a moment later, and that moment
	// varies (a goroutine switch, the race detector), so the stamps may
	// come up to a scheduling delay short of the gap. A millisecond of
	// slack still fails a gap that is not kept.
	const skew = time.Millisecond
	for i := 1; i < len(src.starts); i++ {
		if d := src.starts[i].Sub(src.starts[i-1]); d < gap-skew {
			t.Errorf("read %d began %v after the one before, want at least %v", i, d, gap)
		}
	}
}

// TestFreshTakesAReadFromElsewhere: a value read elsewhere serves the
// waiting round when its read began after every caller of the round asked,
// and then no read of the round's own is made; one that began earlier
// serves no one.
func TestFreshTakesAReadFromElsewhere(t *testing.T) {
	src := &source{gate: make(chan struct{}), started: make(chan struct{}, 3)}
	src.version.Store(1)
	f := &fresh{read: src.AuthVersion}
	ctx := context.Background()
	var first int64
	var wg sync.WaitGroup
	wg.Go(func() { first, _ = f.get(ctx) })
	<-src.started // the first read began, with version 1; it waits for the gate
	before := time.Now()
	second := make(chan int64, 1)
	go func() {
		v, _ := f.get(ctx)
		second <- v
	}()
	polltest.Until(t, "the second caller to queue", func() bool { return f.waiters() != 0 })
	f.saw(7, before) // began before the second caller asked: too old
	if f.waiters() == 0 {
		t.Fatal("a read that began before the caller asked served it")
	}
	f.saw(2, time.Now())
	// Served while the first read still waits at the gate: no read of its own.
	select {
	case v := <-second:
		if v != 2 {
			t.Errorf("second caller got %d, want 2, the read from elsewhere", v)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the second caller still waits after a read from elsewhere")
	}
	close(src.gate)
	wg.Wait()
	if first != 1 {
		t.Errorf("first caller got %d, want 1, its own read", first)
	}
}

// waiters counts the callers waiting for a read.
func (f *fresh) waiters() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.waiting)
}

// TestFreshWaitsForABusyWritersRead: while reads are being offered from
// elsewhere (the store's writer is busy), a caller is given the gap for
// one, and the offering side is prompted; the offer that comes serves the
// caller, and no read of the loop's own is made.
func TestFreshWaitsForABusyWritersRead(t *testing.T) {
	src := &reads{}
	src.v.Store(1)
	f := &fresh{read: src.AuthVersion, gap: time.Minute}
	prompted := make(chan struct{}, 1)
	f.prompt = func() {
		select {
		case prompted <- struct{}{}:
		default:
		}
	}
	f.saw(1, time.Now()) // the writer offered a read a moment ago: it is busy
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got := make(chan int64, 1)
	go func() {
		v, err := f.get(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- v
	}()
	select {
	case <-prompted:
	case <-ctx.Done():
		t.Fatal("the writer was never prompted")
	}
	f.saw(2, time.Now())
	select {
	case v := <-got:
		if v != 2 {
			t.Errorf("caller got %d, want 2, the writer's read", v)
		}
	case <-ctx.Done():
		t.Fatal("the caller still waits after the writer's read")
	}
	src.mu.Lock()
	defer src.mu.Unlock()
	if n := len(src.starts); n != 0 {
		t.Errorf("%d reads of the loop's own, want none: the writer's served", n)
	}
}

// TestFreshReadsAtOnceWhenNoOneOffers: with no reads offered lately (an
// idle writer), a caller is read for at once, however long the gap.
func TestFreshReadsAtOnceWhenNoOneOffers(t *testing.T) {
	src := &reads{}
	src.v.Store(3)
	f := &fresh{read: src.AuthVersion, gap: time.Hour, prompt: func() { t.Error("prompted an idle writer") }}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if v, err := f.get(ctx); err != nil || v != 3 {
		t.Fatalf("get = %d, %v, want 3 at once", v, err)
	}
}

// TestFreshOfferServesThoseWhoAskedBefore: an offered read serves the
// callers who asked before it began, and leaves the later ones waiting.
func TestFreshOfferServesThoseWhoAskedBefore(t *testing.T) {
	src := &source{gate: make(chan struct{}), started: make(chan struct{}, 3)}
	f := &fresh{read: src.AuthVersion}
	ctx := context.Background()
	var wg sync.WaitGroup
	wg.Go(func() { _, _ = f.get(ctx) })
	<-src.started // the loop's read holds at the gate; callers now queue
	early := make(chan int64, 1)
	go func() { v, _ := f.get(ctx); early <- v }()
	polltest.Until(t, "the early caller to queue", func() bool { return f.waiters() == 1 })
	between := time.Now()
	late := make(chan int64, 1)
	go func() { v, _ := f.get(ctx); late <- v }()
	polltest.Until(t, "the late caller to queue", func() bool { return f.waiters() == 2 })
	f.saw(5, between)
	select {
	case v := <-early:
		if v != 5 {
			t.Errorf("the early caller got %d, want 5, the offer", v)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the early caller was not served by an offer that began after it asked")
	}
	if n := f.waiters(); n != 1 {
		t.Fatalf("%d callers wait, want the late one", n)
	}
	src.version.Store(6)
	close(src.gate)
	if v := <-late; v != 6 {
		t.Errorf("the late caller got %d, want 6, a read that began after it asked", v)
	}
	wg.Wait()
}
