package store

import (
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// TestMutableColsCompareWhatTheyWrite holds each mutable column's
// comparison to the value it writes: changing one field of a message
// changes exactly its column, by comparison and by value, and leaves every
// other column the same.
func TestMutableColsCompareWhatTheyWrite(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	base := domain.Message{ID: "msg_1", Status: domain.Sent, Channel: domain.SMS, Provider: "smpp", ProviderRef: "r1",
		ErrorCode: "E", ErrorMessage: "m", UpdatedAt: at, SentAt: at, LeaseOwner: "node", Charged: 5, Credits: 5,
		Segments: 1, Encoding: "GSM-7", Attempts: 1, Route: "r", Cost: 3, CostCurrency: "EUR",
		Upline: []domain.Level{{AccountID: "acc_top", Charged: 2, SMS: 2, RCS: 1}},
		Fraud:  &domain.FraudDecision{Rule: "recipient", Key: "4672", Count: 3, Cap: 2, At: at}}
	later := at.Add(time.Second)
	change := map[string]func(m *domain.Message){
		"status":          func(m *domain.Message) { m.Status = domain.Delivered },
		"channel":         func(m *domain.Message) { m.Channel = domain.RCS },
		"provider":        func(m *domain.Message) { m.Provider = "other" },
		"provider_ref":    func(m *domain.Message) { m.ProviderRef = "r2" },
		"error_code":      func(m *domain.Message) { m.ErrorCode = "" },
		"error_message":   func(m *domain.Message) { m.ErrorMessage = "" },
		"updated_at":      func(m *domain.Message) { m.UpdatedAt = later },
		"sent_at":         func(m *domain.Message) { m.SentAt = time.Time{} },
		"delivered_at":    func(m *domain.Message) { m.DeliveredAt = later },
		"read_at":         func(m *domain.Message) { m.ReadAt = later },
		"failed_at":       func(m *domain.Message) { m.FailedAt = later },
		"canceled_at":     func(m *domain.Message) { m.CanceledAt = later },
		"next_attempt_at": func(m *domain.Message) { m.NextAttemptAt = later },
		"lease_owner":     func(m *domain.Message) { m.LeaseOwner = "" },
		"charged":         func(m *domain.Message) { m.Charged = 0 },
		"credits":         func(m *domain.Message) { m.Credits = 4 },
		"segments":        func(m *domain.Message) { m.Segments = 2 },
		"encoding":        func(m *domain.Message) { m.Encoding = "UCS-2" },
		"attempts":        func(m *domain.Message) { m.Attempts = 2 },
		"route":           func(m *domain.Message) { m.Route = "r2" },
		"cost":            func(m *domain.Message) { m.Cost = 4 },
		"cost_currency":   func(m *domain.Message) { m.CostCurrency = "USD" },
		"upline": func(m *domain.Message) {
			m.Upline = append([]domain.Level(nil), m.Upline...)
			m.Upline[0].Charged = 0
		},
		"fraud": func(m *domain.Message) {
			d := *m.Fraud
			d.Resolution = domain.HoldReleased
			m.Fraud = &d
		},
	}
	if len(change) != len(mutableCols) {
		t.Fatalf("%d changes for %d columns", len(change), len(mutableCols))
	}
	for c, col := range mutableCols {
		f, ok := change[col.name]
		if !ok {
			t.Fatalf("no change for column %s", col.name)
		}
		after := base
		f(&after)
		for d, other := range mutableCols {
			same := other.same(&base, &after)
			sameValue := other.value(&base) == other.value(&after)
			if same != sameValue {
				t.Errorf("changing %s: %s compares same=%v but its values are same=%v", col.name, other.name, same, sameValue)
			}
			if same != (c != d) {
				t.Errorf("changing %s: %s same=%v", col.name, other.name, same)
			}
		}
	}
	// Copies of the same state, slices and decisions included, are the
	// same in every column.
	twin := base
	twin.Upline = append([]domain.Level(nil), base.Upline...)
	d := *base.Fraud
	twin.Fraud = &d
	for _, col := range mutableCols {
		if !col.same(&base, &twin) {
			t.Errorf("%s differs between copies", col.name)
		}
	}
	// No decision and no levels against some.
	bare := base
	bare.Upline, bare.Fraud = nil, nil
	for _, name := range []string{"upline", "fraud"} {
		for _, col := range mutableCols {
			if col.name == name && (col.same(&base, &bare) || col.value(&bare) != "") {
				t.Errorf("%s: none against some compares the same, or none writes %q", name, col.value(&bare))
			}
		}
	}
}
