package httpcall

import (
	"net/http"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		v    string
		want time.Duration
	}{
		{"", 0}, {"3", 3 * time.Second}, {" 120 ", 2 * time.Minute}, {"-5", 0}, {"soon", 0},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
	} {
		if got := RetryAfter(c.v, now); got != c.want {
			t.Errorf("RetryAfter(%q) = %v, want %v", c.v, got, c.want)
		}
	}
}

func TestFresh(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	for d, want := range map[time.Duration]bool{0: true, -MaxSkew: true, MaxSkew: true, -MaxSkew - time.Second: false,
		MaxSkew + time.Second: false} {
		if got := Fresh(now.Add(d), now); got != want {
			t.Errorf("Fresh(now%+v) = %v", d, got)
		}
	}
}
