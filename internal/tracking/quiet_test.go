package tracking

import (
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// A message put back in the queue (a retry, an RCS fallback) keeps to the
// quiet hours it was accepted under.
func TestRequeueKeepsQuietHours(t *testing.T) {
	sp, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 21, 20, 58, 0, 0, sp)    // two minutes before the window
	morning := time.Date(2026, 11, 22, 8, 0, 0, 0, sp) // its end
	plan := &domain.Fallback{Channel: domain.SMS, Message: "t", Segments: 1, Encoding: "GSM-7", SMSCredits: 1, RCSCredits: 1}
	msg := func(ch domain.Channel, quiet string) domain.Message {
		return domain.Message{ID: "m", To: "5511999990000", Type: ch, Channel: ch, Status: domain.Sending, LeaseOwner: "n1",
			Content: domain.Content{Quiet: quiet, Fallback: plan}}
	}
	cases := []struct {
		name string
		m    domain.Message
		r    Report
		want time.Time
	}{
		{"a retry due inside the window waits for its end", msg(domain.SMS, "21:00-08:00"),
			Report{Kind: Retry, RetryAt: at.Add(5 * time.Minute), LeaseOwner: "n1"}, morning},
		{"a retry due before the window goes", msg(domain.SMS, "21:00-08:00"),
			Report{Kind: Retry, RetryAt: at.Add(time.Minute), LeaseOwner: "n1"}, at.Add(time.Minute)},
		{"without quiet hours a retry goes when due", msg(domain.SMS, ""),
			Report{Kind: Retry, RetryAt: at.Add(5 * time.Minute), LeaseOwner: "n1"}, at.Add(5 * time.Minute)},
		{"a fallback inside the window waits too", msg(domain.RCS, "20:00-08:00"),
			Report{Kind: Fallback, Provider: "sms", LeaseOwner: "n1"}, morning},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := c.m
			transition(&m, c.r, at)
			if m.Status != domain.Sending || !m.NextAttemptAt.Equal(c.want) {
				t.Errorf("status %s, due %s; want SENDING due %s", m.Status, m.NextAttemptAt.In(sp), c.want)
			}
		})
	}
}
