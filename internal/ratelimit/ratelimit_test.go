package ratelimit

import (
	"errors"
	"testing"
	"time"
)

func TestWindowID(t *testing.T) {
	cases := []struct {
		at        time.Time
		wantReset time.Time
	}{
		{t0, t0.Add(time.Minute)},
		{t0.Add(59999 * time.Millisecond), t0.Add(time.Minute)},
		{t0.Add(time.Minute), t0.Add(2 * time.Minute)},
		{t0.In(time.FixedZone("X", 5*3600+30*60)), t0.Add(time.Minute)}, // zones do not shift windows
		{time.Unix(-1, 0), time.Unix(0, 0)},
		{time.Unix(-60, 0), time.Unix(0, 0)},
		{time.Unix(-61, 0), time.Unix(-60, 0)},
	}
	for _, c := range cases {
		if got := windowReset(windowID(c.at)); !got.Equal(c.wantReset) {
			t.Errorf("reset of window containing %v = %v, want %v", c.at, got, c.wantReset)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	reset := t0.Add(time.Minute)
	cases := []struct {
		now  time.Time
		want time.Duration
	}{
		{t0, 60 * time.Second},
		{t0.Add(time.Nanosecond), 60 * time.Second},
		{t0.Add(30250 * time.Millisecond), 30 * time.Second},
		{t0.Add(58 * time.Second), 2 * time.Second},
		{t0.Add(58*time.Second + time.Nanosecond), 2 * time.Second},
		{t0.Add(59 * time.Second), time.Second},
		{t0.Add(59999 * time.Millisecond), time.Second},
		{reset, time.Second},                  // never zero
		{reset.Add(time.Second), time.Second}, // nor negative
	}
	for _, c := range cases {
		if got := retryAfter(c.now, reset); got != c.want {
			t.Errorf("retryAfter(%v) = %v, want %v", c.now.Sub(t0), got, c.want)
		}
	}
}

func TestCheckKey(t *testing.T) {
	cases := []struct {
		key string
		ok  bool
	}{
		{"acct_1", true},
		{"2001:db8::1", true},
		{"", false},
		{"{a}", false},
		{"a}", false},
	}
	for _, c := range cases {
		err := checkKey(c.key)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrInvalidKey)) {
			t.Errorf("checkKey(%q) = %v, want ok=%v", c.key, err, c.ok)
		}
	}
}
