package manage

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/ratelimit"
	"github.com/msgsvc/msgsvc/internal/user"
)

// Wrong passwords are refused before hashing once their key is over its
// window: the 11th wrong attempt within a minute never reaches verify.
func TestGateRefusesBeforeHashing(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	g := newPasswordGate(ratelimit.NewMemory(func() time.Time { return now }), 10, user.NewSlots(1))
	var hashed int
	wrong := func() bool { hashed++; return false }
	keys := []gateKey{{"pw-change:usr_1", 1}}
	for i := range 10 {
		if ok, err := g.check(context.Background(), keys, wrong); ok || err != nil {
			t.Fatalf("attempt %d: %v %v", i+1, ok, err)
		}
	}
	_, err := g.check(context.Background(), keys, wrong)
	if th, ok := IsThrottled(err); !ok || th.RetryAfter < time.Second {
		t.Fatalf("the 11th wrong attempt: %v", err)
	}
	if hashed != 10 {
		t.Fatalf("%d checks hashed, want 10", hashed)
	}
	// Another key is not affected, and a minute later the window is new.
	if _, err := g.check(context.Background(), []gateKey{{"pw-change:usr_2", 1}}, wrong); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	if _, err := g.check(context.Background(), keys, func() bool { return true }); err != nil {
		t.Fatalf("a minute later: %v", err)
	}
}

// However many checks of distinct accounts arrive at once, no more than
// the slots hash at once; the others wait for a slot.
func TestGateBoundsConcurrentHashes(t *testing.T) {
	g := newPasswordGate(nil, 10, user.NewSlots(2))
	var running, peak atomic.Int32
	release := make(chan struct{})
	verify := func() bool {
		n := running.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		<-release
		running.Add(-1)
		return false
	}
	var wg sync.WaitGroup
	var throttled atomic.Int32
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			keys := []gateKey{{"pw-account:" + string(rune('a'+i)), 1}}
			if _, err := g.check(context.Background(), keys, verify); err != nil {
				throttled.Add(1)
			}
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for running.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	if p := peak.Load(); p > 2 {
		t.Fatalf("%d checks hashed at once, want at most 2", p)
	}
	if throttled.Load() != 0 {
		t.Fatalf("%d distinct accounts throttled, want none (they wait for a slot)", throttled.Load())
	}
}

func TestGateOneCheckPerAccountAtOnce(t *testing.T) {
	g := newPasswordGate(nil, 10, user.NewSlots(4))
	keys := []gateKey{{"pw-account:ana@example.com", 1}, {"pw-addr:192.0.2.1", 2}}
	if !g.enter(keys) {
		t.Fatal("the first check was refused")
	}
	if _, err := g.check(context.Background(), keys, func() bool { t.Fatal("hashed"); return false }); err == nil {
		t.Fatal("a second check of the same account ran")
	}
	if !g.enter([]gateKey{{"pw-account:bo@example.com", 1}, {"pw-addr:192.0.2.1", 2}}) {
		t.Fatal("a second account from the same address was refused")
	}
	if g.enter([]gateKey{{"pw-account:cy@example.com", 1}, {"pw-addr:192.0.2.1", 2}}) {
		t.Fatal("a third check from one address ran")
	}
	if _, ok := IsThrottled(&ErrThrottled{RetryAfter: time.Second}); !ok {
		t.Fatal("IsThrottled")
	}
}

func TestPasswordProblem(t *testing.T) {
	for pw, bad := range map[string]bool{"          ": true, " \t \t \t \t ": true, "correct horse": false, "short": true,
		strings.Repeat("\u200b", 12): true, strings.Repeat("\u200b \u2060\ufeff\u00a0", 4): true, strings.Repeat("\u200d", 12): true,
		"correct\u200bhorse": false} {
		if got := passwordProblem(pw) != ""; got != bad {
			t.Errorf("passwordProblem(%q) refuses: %v, want %v", pw, got, bad)
		}
	}
}
