package backoff

import (
	"context"
	"testing"
	"time"
)

func fixed(v float64) func() float64 { return func() float64 { return v } }

func TestDoublingUpToMax(t *testing.T) {
	p := Policy{Min: 100 * time.Millisecond, Max: time.Second, Jitter: Equal, Rand: fixed(0)}
	for n, want := range map[int]time.Duration{1: 50 * time.Millisecond, 2: 100 * time.Millisecond,
		3: 200 * time.Millisecond, 4: 400 * time.Millisecond, 5: 500 * time.Millisecond, 500: 500 * time.Millisecond} {
		if got, ok := p.Delay(n); !ok || got != want {
			t.Errorf("Delay(%d) = %v, %v; want %v", n, got, ok, want)
		}
	}
	p.Rand = fixed(0.999999)
	if got, _ := p.Delay(50); got < 999*time.Millisecond || got > time.Second {
		t.Errorf("upper edge of equal jitter: %v", got)
	}
	if _, ok := p.Delay(0); ok {
		t.Error("retry 0 has a delay")
	}
}

func TestNoJitterIsExact(t *testing.T) {
	p := Policy{Min: time.Minute, Max: 6 * time.Hour}
	for n, want := range map[int]time.Duration{1: time.Minute, 2: 2 * time.Minute, 9: 256 * time.Minute, 10: 6 * time.Hour, 64: 6 * time.Hour} {
		if got, _ := p.Delay(n); got != want {
			t.Errorf("Delay(%d) = %v, want %v", n, got, want)
		}
	}
}

func TestStepsAndSpread(t *testing.T) {
	p := Policy{Steps: []time.Duration{10 * time.Second, time.Minute}, Jitter: Spread(0.1)}
	for _, c := range []struct {
		n    int
		r    float64
		want time.Duration
		ok   bool
	}{
		{1, 0.5, 10 * time.Second, true}, {1, 0, 9 * time.Second, true}, {2, 1, 66 * time.Second, true},
		{2, 7, 66 * time.Second, true}, {2, -1, 54 * time.Second, true}, {3, 0.5, 0, false},
	} {
		p.Rand = fixed(c.r)
		got, ok := p.Delay(c.n)
		if d := got - c.want; ok != c.ok || d < -time.Microsecond || d > time.Microsecond {
			t.Errorf("Delay(%d) with %v = %v, %v; want %v, %v", c.n, c.r, got, ok, c.want, c.ok)
		}
	}
	p.RepeatLast, p.Rand = true, fixed(0.5)
	if got, ok := p.Delay(40); !ok || got != time.Minute {
		t.Errorf("repeated last step: %v %v", got, ok)
	}
	p.Attempts = 4
	if _, ok := p.Delay(3); !ok {
		t.Error("no third retry of four tries")
	}
	if _, ok := p.Delay(4); ok {
		t.Error("a fifth try of four")
	}
	p.Attempts = 1
	if _, ok := p.Delay(1); ok {
		t.Error("a retry when one try is all")
	}
}

func TestLoop(t *testing.T) {
	var waits []time.Duration
	sleep := func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	l := Loop{Policy: Policy{Min: time.Second, Max: 8 * time.Second, Attempts: 4, MaxWait: 10 * time.Second}, Sleep: sleep}

	tries := 0
	if n := l.Run(context.Background(), func(int) Verdict { tries++; return Verdict{Again: true} }); n != 3 || tries != 4 {
		t.Errorf("always failing: %d retries, %d tries", n, tries)
	}
	if want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}; len(waits) != 3 || waits[2] != want[2] {
		t.Errorf("waits %v, want %v", waits, want)
	}

	waits, tries = nil, 0
	l.Run(context.Background(), func(a int) Verdict { tries++; return Verdict{Again: a == 1, AtLeast: 3 * time.Second} })
	if tries != 2 || len(waits) != 1 || waits[0] != 3*time.Second {
		t.Errorf("Retry-After: %d tries, waits %v", tries, waits)
	}

	waits, tries = nil, 0
	l.Run(context.Background(), func(int) Verdict { tries++; return Verdict{Again: true, AtLeast: time.Minute} })
	if tries != 1 || len(waits) != 0 {
		t.Errorf("a wait beyond MaxWait: %d tries, waits %v", tries, waits)
	}

	waits = nil
	l.Run(context.Background(), func(a int) Verdict { return Verdict{Again: a == 1, Scale: 4} })
	if len(waits) != 1 || waits[0] != 4*time.Second {
		t.Errorf("scaled: %v", waits)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	tries = 0
	Loop{Policy: l.Policy, Sleep: sleep, Budget: 2 * time.Hour}.Run(ctx, func(int) Verdict { tries++; return Verdict{Again: true} })
	if tries != 1 {
		t.Errorf("%d tries with no time left for a second", tries)
	}
}

func TestSleepEndsWithCtx(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if Sleep(ctx, time.Hour) == nil || Sleep(ctx, 0) == nil {
		t.Error("a wait outlived its context")
	}
	if Sleep(context.Background(), 0) != nil {
		t.Error("no wait failed")
	}
}
