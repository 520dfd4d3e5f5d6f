package tracking

import (
	"context"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/tracking/trackingtest"
)

// Refunds of a sub-account's message reach every level that paid for it.

const micro = ledger.Micro

// childMessage is charged("id") sent by a customer two levels below the
// top: it paid 2 credits, its parent 1.5 and the top 1.
func childMessage(id string) domain.Message {
	m := charged(id)
	m.AccountID, m.Credits, m.Charged = "acc_leaf", 2*micro, 2*micro
	m.Upline = []domain.Level{{AccountID: "acc_mid", Charged: 3 * micro / 2}, {AccountID: "acc_top", Charged: micro}}
	return m
}

// sentChild is childMessage a provider took.
func sentChild(id string, billDelivery bool) domain.Message {
	m := childMessage(id)
	m.Status, m.LeaseOwner, m.NextAttemptAt, m.SentAt = domain.Sent, "", time.Time{}, t0.Add(time.Second)
	m.BillDelivery = billDelivery
	return m
}

// chainStore holds msgs and the balances left after they were charged.
func chainStore(t *testing.T, msgs ...domain.Message) (*trackingtest.Store, *Tracker) {
	t.Helper()
	st := &trackingtest.Store{}
	st.Put(msgs...)
	st.Seed(func(r *trackingtest.Rows) {
		r.Balances = map[string]int64{"acc_leaf": 10 * micro, "acc_mid": 10 * micro, "acc_top": 10 * micro}
	})
	return st, newTestTracker(t, st, &recorder{})
}

// checkRefunds compares the balances (each started at 10 credits) and the
// refund lines, which must each name the message.
func checkRefunds(t *testing.T, st *trackingtest.Store, messageID string, want map[string]int64) {
	t.Helper()
	rows := st.Rows()
	got := map[string]int64{}
	for _, e := range rows.Ledger {
		if e.Kind != ledger.Refund || e.MessageID != messageID || e.Note == "" {
			t.Errorf("line %+v: want a refund naming %s with its note", e, messageID)
		}
		got[e.AccountID] += e.Amount
	}
	for acc, w := range want {
		if got[acc] != w || rows.Balances[acc] != 10*micro+w {
			t.Errorf("%s: refunded %d (balance %d), want %d", acc, got[acc], rows.Balances[acc], w)
		}
	}
	for acc := range got {
		if _, ok := want[acc]; !ok {
			t.Errorf("%s refunded %d, want nothing", acc, got[acc])
		}
	}
}

func TestRefundsReachEveryLevel(t *testing.T) {
	ctx := context.Background()
	all := map[string]int64{"acc_leaf": 2 * micro, "acc_mid": 3 * micro / 2, "acc_top": micro}
	for _, tc := range []struct {
		name   string
		m      domain.Message
		r      Report
		refund map[string]int64
	}{
		{"rejected at the hand-over", childMessage("m"), Report{Kind: Rejected, ErrorCode: domain.CodeRejected, LeaseOwner: "n1"}, all},
		{"canceled", childMessage("m"), Report{Kind: Cancel}, all},
		{"expired while queued", childMessage("m"), Report{Kind: Expire}, all},
		{"failed after hand-over, billed on submit", sentChild("m", false),
			Report{Kind: Progress, Status: domain.Failed, ErrorCode: domain.CodeUndelivered}, map[string]int64{}},
		{"failed after hand-over, billed on delivery", sentChild("m", true),
			Report{Kind: Progress, Status: domain.Failed, ErrorCode: domain.CodeUndelivered}, all},
		{"expired after hand-over, billed on delivery", sentChild("m", true), Report{Kind: Expire}, all},
		{"expired after hand-over, billed on submit", sentChild("m", false), Report{Kind: Expire}, map[string]int64{}},
		{"delivered, billed on delivery", sentChild("m", true), Report{Kind: Progress, Status: domain.Delivered},
			map[string]int64{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, tr := chainStore(t, tc.m)
			tc.r.MessageID = "m"
			if err := tr.Apply(ctx, []Report{tc.r}); err != nil {
				t.Fatal(err)
			}
			checkRefunds(t, st, "m", tc.refund)
			m := st.Message("m")
			if len(tc.refund) > 0 {
				if m.Charged != 0 || m.Upline[0].Charged != 0 || m.Upline[1].Charged != 0 {
					t.Fatalf("message left charged %d, upline %+v: want nothing held at any level", m.Charged, m.Upline)
				}
			}
			// A second failure report refunds nothing again.
			if err := tr.Apply(ctx, []Report{{Kind: Progress, MessageID: "m", Status: domain.Failed}}); err != nil {
				t.Fatal(err)
			}
			checkRefunds(t, st, "m", tc.refund)
		})
	}
}

// Billed on delivery, a failure after hand-over counts in usage as not
// charged: the usage deltas of the message sum to no credits.
func TestBillDeliveryUsageCountsNothing(t *testing.T) {
	ctx := context.Background()
	m := sentChild("m", true)
	st, tr := chainStore(t, m)
	st.Seed(func(r *trackingtest.Rows) { r.Usage = []domain.UsageDelta{domain.UsageOf(&m)} })
	if err := tr.Apply(ctx, []Report{{Kind: Progress, MessageID: "m", Status: domain.Failed, ErrorCode: domain.CodeUndelivered}}); err != nil {
		t.Fatal(err)
	}
	var credits int64
	for _, d := range st.Rows().Usage {
		credits += d.Credits
	}
	if credits != 0 {
		t.Fatalf("usage counts %d credits for a message billed on delivery that failed", credits)
	}
}

// An RCS message with an SMS fallback holds the larger price at every
// level; going out as SMS gives each level back the difference to its own
// SMS price, and being taken as RCS the difference to its RCS price.
func TestFallbackLowersEveryLevel(t *testing.T) {
	ctx := context.Background()
	rcs := func() domain.Message {
		m := childMessage("m")
		m.Type, m.Channel = domain.RCS, domain.RCS
		m.Content.Fallback = &domain.Fallback{Channel: domain.SMS, Message: "hi", Segments: 1, Encoding: "GSM-7",
			SMSCredits: 2 * micro, RCSCredits: micro}
		m.Upline = []domain.Level{{AccountID: "acc_mid", Charged: 3 * micro / 2, SMS: 3 * micro / 2, RCS: micro / 2},
			{AccountID: "acc_top", Charged: micro, SMS: micro / 2, RCS: micro}}
		return m
	}
	t.Run("as SMS", func(t *testing.T) {
		st, tr := chainStore(t, rcs())
		if err := tr.Apply(ctx, []Report{{Kind: Fallback, MessageID: "m", Provider: "smsc", LeaseOwner: "n1"}}); err != nil {
			t.Fatal(err)
		}
		checkRefunds(t, st, "m", map[string]int64{"acc_top": micro / 2})
		if up := st.Message("m").Upline; up[0].Charged != 3*micro/2 || up[1].Charged != micro/2 {
			t.Fatalf("upline %+v after the fallback", up)
		}
	})
	t.Run("as RCS", func(t *testing.T) {
		st, tr := chainStore(t, rcs())
		if err := tr.Apply(ctx, []Report{{Kind: Accepted, MessageID: "m", Provider: "rcsp", Ref: "r", LeaseOwner: "n1"}}); err != nil {
			t.Fatal(err)
		}
		checkRefunds(t, st, "m", map[string]int64{"acc_leaf": micro, "acc_mid": micro})
		// Then it fails after hand-over, billed on submit: nothing more.
		if err := tr.Apply(ctx, []Report{{Kind: Progress, MessageID: "m", Status: domain.Failed}}); err != nil {
			t.Fatal(err)
		}
		checkRefunds(t, st, "m", map[string]int64{"acc_leaf": micro, "acc_mid": micro})
	})
}
