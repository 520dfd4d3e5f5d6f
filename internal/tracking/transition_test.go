package tracking

import (
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
)

func TestTransitionFallbackAndSettle(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	plan := domain.Content{Fallback: &domain.Fallback{Channel: domain.SMS, Message: "t", Segments: 2, Encoding: "GSM-7",
		SMSCredits: 2_000000, RCSCredits: 1_000000}}
	rcsMsg := func(charged int64, content domain.Content) domain.Message {
		return domain.Message{ID: "m", Type: domain.RCS, Channel: domain.RCS, Status: domain.Sending, Credits: 2_000000, Charged: charged,
			Content: content, LeaseOwner: "n1", NextAttemptAt: at}
	}
	cases := []struct {
		name    string
		m       domain.Message
		r       Report
		status  domain.Status
		channel domain.Channel
		credits int64
		refund  int64
	}{
		{"fallback moves to domain.SMS and queues again", rcsMsg(2_000000, plan), Report{Kind: Fallback, Provider: "sms", LeaseOwner: "n1"}, domain.Sending, domain.SMS, 2_000000, 0},
		{"fallback by another lease holder is ignored", rcsMsg(2_000000, plan), Report{Kind: Fallback, Provider: "sms", LeaseOwner: "n2"}, domain.Sending, domain.RCS, 2_000000, 0},
		{"fallback without a plan fails", rcsMsg(2_000000, domain.Content{}), Report{Kind: Fallback, LeaseOwner: "n1"}, domain.Failed, domain.RCS, 2_000000, 2_000000},
		{"accepted as domain.RCS settles to the domain.RCS price", rcsMsg(2_000000, plan), Report{Kind: Accepted, Provider: "rcs", LeaseOwner: "n1"}, domain.Sent, domain.RCS, 1_000000, 1_000000},
		{"a delivery report overtaking the answer settles too", rcsMsg(2_000000, plan), Report{Kind: Progress, Status: domain.Delivered}, domain.Delivered, domain.RCS, 1_000000, 1_000000},
		{"test keys are never refunded", rcsMsg(0, plan), Report{Kind: Accepted, LeaseOwner: "n1"}, domain.Sent, domain.RCS, 1_000000, 0},
		{"no plan, nothing to settle", rcsMsg(2_000000, domain.Content{}), Report{Kind: Accepted, LeaseOwner: "n1"}, domain.Sent, domain.RCS, 2_000000, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := c.m
			_, money := transition(&m, c.r, at)
			if m.Status != c.status || m.Channel != c.channel || m.Credits != c.credits || money.amount != c.refund {
				t.Fatalf("status %s channel %s credits %d refund %d", m.Status, m.Channel, m.Credits, money.amount)
			}
			if c.channel == domain.SMS && (m.Segments != 2 || m.Encoding != "GSM-7" || m.Provider != "sms" || !m.NextAttemptAt.Equal(at) || m.LeaseOwner != "" || !money.changed) {
				t.Fatalf("fallback message: %+v %+v", m, money)
			}
		})
	}
}

// A hand-over that failed and was retried leaves its error on the message
// while it waits ("shown while retrying"); once a provider takes the
// message, or reports on it, the error is history and the message must not
// read as DELIVERED with an error code.
func TestRetryErrorClearedOnceTaken(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	retried := func() domain.Message {
		m := domain.Message{ID: "m", Type: domain.SMS, Channel: domain.SMS, Status: domain.Sending, LeaseOwner: "n1", NextAttemptAt: at}
		transition(&m, Report{Kind: Retry, ErrorCode: domain.CodeProviderError, ErrorMessage: "timeout", RetryAt: at.Add(5 * time.Second),
			LeaseOwner: "n1"}, at)
		if m.ErrorCode != domain.CodeProviderError || m.ErrorMessage != "timeout" {
			t.Fatalf("while retrying: %q %q, want the last error shown", m.ErrorCode, m.ErrorMessage)
		}
		m.LeaseOwner = "n1" // claimed again
		return m
	}
	for name, r := range map[string]Report{
		"accepted":                      {Kind: Accepted, Provider: "backup", Ref: "r1", LeaseOwner: "n1"},
		"receipt overtaking the answer": {Kind: Progress, Status: domain.Delivered, Ref: "r1"},
	} {
		m := retried()
		transition(&m, r, at.Add(6*time.Second))
		if m.ErrorCode != "" || m.ErrorMessage != "" {
			t.Errorf("%s: %s with error %q %q", name, m.Status, m.ErrorCode, m.ErrorMessage)
		}
	}
}

// A message taken back and queued as SMS ignores late reports about the
// RCS message, and is refunded if its SMS never goes out.
func TestTakenBackMessageWaitingForItsSMS(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	plan := domain.Content{Fallback: &domain.Fallback{Channel: domain.SMS, Message: "t", Segments: 1, Encoding: "GSM-7",
		SMSCredits: 2_000000, RCSCredits: 1_000000}}
	waiting := domain.Message{ID: "m", Type: domain.RCS, Channel: domain.RCS, Status: domain.Sent, Credits: 2_000000, Charged: 2_000000,
		Content: plan, Provider: "rcs", NextAttemptAt: at, LeaseOwner: "n1", ExpiresAt: at.Add(time.Hour)}
	m := waiting
	if _, mon := transition(&m, Report{Kind: Revoked, Provider: "sms", LeaseOwner: "n2"}, at); mon.changed || m.Channel != domain.RCS {
		t.Fatalf("another lease holder's word counted: %+v", m)
	}
	if _, mon := transition(&m, Report{Kind: Revoked, Provider: "sms", LeaseOwner: "n1"}, at); !mon.changed || mon.amount != 0 ||
		m.Channel != domain.SMS || m.Status != domain.Sent || m.Provider != "sms" || !awaitingHandOver(&m) {
		t.Fatalf("revoked: %+v %+v", m, mon)
	}
	if steps, _ := transition(&m, Report{Kind: Progress, Status: domain.Delivered}, at); len(steps) != 0 || m.Status != domain.Sent {
		t.Fatalf("a late RCS report moved the queued SMS: %v %+v", steps, m)
	}
	expired := m
	if steps, mon := transition(&expired, Report{Kind: Expire}, at); len(steps) != 1 || mon.amount != 2_000000 || expired.Charged != 0 {
		t.Fatalf("expired before its SMS went out: %v %+v", steps, mon)
	}
	if steps, mon := transition(&m, Report{Kind: Accepted, Provider: "sms", Ref: "s1"}, at); len(steps) != 0 || !mon.changed ||
		m.ProviderRef != "s1" || awaitingHandOver(&m) || m.Status != domain.Sent {
		t.Fatalf("SMS taken: %v %+v", steps, m)
	}
	if steps, _ := transition(&m, Report{Kind: Progress, Status: domain.Delivered}, at); len(steps) != 1 || m.Status != domain.Delivered {
		t.Fatalf("the SMS receipt: %v %+v", steps, m)
	}
}

// TestNoStatusLeadsBackBeforeAStep holds what Change.FirstSteps relies
// on: a message never held is SENDING only before its first status step.
// Every report of every kind, applied to a message in every status (SMS
// and RCS, with and without a fallback, waiting or not; held ones with
// their HeldAt), leaves a message without a HeldAt SENDING only when it
// was SENDING and took no step.
func TestNoStatusLeadsBackBeforeAStep(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	plan := domain.Content{Fallback: &domain.Fallback{Channel: domain.SMS, Message: "t", Segments: 1, Encoding: "GSM-7",
		SMSCredits: 2, RCSCredits: 1}}
	kinds := []Kind{Accepted, Progress, Retry, Rejected, Expire, Cancel, Fallback, Revoked, Unrevoked, Release, RejectHeld}
	statuses := append([]domain.Status{domain.Held}, domain.Statuses...)
	tried := 0
	for _, from := range statuses {
		for _, channel := range []domain.Channel{domain.SMS, domain.RCS} {
			for _, content := range []domain.Content{{}, plan} {
				for _, waiting := range []bool{false, true} {
					for _, kind := range kinds {
						for _, reported := range statuses {
							m := domain.Message{ID: "m", Type: channel, Channel: channel, Status: from, Content: content,
								Credits: 2, Charged: 2, LeaseOwner: "n1", ExpiresAt: at.Add(time.Hour)}
							if from == domain.Held {
								m.HeldAt = at.Add(-time.Minute)
							}
							if waiting {
								m.NextAttemptAt = at.Add(time.Minute)
							}
							r := Report{Kind: kind, Status: reported, Provider: "p", Ref: "r", LeaseOwner: "n1",
								FallbackAt: at.Add(time.Minute), RetryAt: at.Add(time.Minute)}
							steps, _ := transition(&m, r, at)
							tried++
							if m.Status == domain.Sending && m.HeldAt.IsZero() && (from != domain.Sending || len(steps) > 0) {
								t.Fatalf("%s (%s, waiting %v) with report %v/%s: now %s after steps %v", from, channel, waiting,
									kind, reported, m.Status, steps)
							}
						}
					}
				}
			}
		}
	}
	t.Logf("%d transitions", tried)
}
