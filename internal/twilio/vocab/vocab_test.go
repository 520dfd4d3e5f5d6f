package vocab

import (
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
)

func TestStatus(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		m    domain.Message
		want string
	}{
		{domain.Message{Status: domain.Sending}, Queued},
		{domain.Message{Status: domain.Sending, ScheduledAt: now.Add(time.Hour)}, Scheduled},
		{domain.Message{Status: domain.Sending, ScheduledAt: now.Add(-time.Hour)}, Queued},
		{domain.Message{Status: domain.Sending, Attempts: 1}, Sending},
		{domain.Message{Status: domain.Sent}, Sent},
		{domain.Message{Status: domain.Delivered}, Delivered},
		{domain.Message{Status: domain.Read}, Read},
		{domain.Message{Status: domain.Failed}, Failed},
		{domain.Message{Status: domain.Failed, ProviderRef: "x"}, Undelivered},
		{domain.Message{Status: domain.Canceled}, Canceled},
	}
	for _, c := range cases {
		if got := Status(c.m, now); got != c.want {
			t.Errorf("Status(%+v) = %q, want %q", c.m, got, c.want)
		}
	}
}

func TestDate(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.FixedZone("x", 3600))
	if got := Date(at); got != "Wed, 04 Mar 2026 04:06:07 +0000" {
		t.Fatalf("Date = %q", got)
	}
	back, err := ParseDate(Date(at))
	if err != nil || !back.Equal(at) {
		t.Fatalf("ParseDate: %v %v", back, err)
	}
	if Date(time.Time{}) != "" {
		t.Fatal("zero date is not empty")
	}
	if _, err := ParseDate("yesterday"); err == nil {
		t.Fatal("ParseDate accepted nonsense")
	}
}
