package intake

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/store"
	"github.com/msgsvc/msgsvc/internal/store/storetest"
)

// A group of sends reads its opt-outs once per account and environment:
// an opted-out number refuses only the sends of the account and
// environment it opted out of, whichever other sends share the group.
func TestCommitSendsOptOuts(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store, _ string) {
		ctx := context.Background()
		a := newAccount(t, st, 100*credit)
		b := newAccount(t, st, 100*credit)
		// newSend numbers its recipients 34600000000, 34600000001, ...
		const stopper, other = "34600000000", "34600000001"
		err := st.Write(ctx, func(tx *store.Tx) error {
			_, err := tx.AddOptOut(ctx, domain.OptOut{AccountID: a.ID, Env: "live", Phone: stopper,
				Channel: domain.SMS, Source: domain.OptOutReply, CreatedAt: t0})
			return err
		})
		if err != nil {
			t.Fatalf("opt out: %v", err)
		}
		toStopper := func(acc domain.Account, env domain.Environment, d time.Duration) pendingSend {
			return newSend(acc, env, at(d), credit, 1)
		}
		toOther := toStopper(a, "live", 4*time.Second)
		toOther.messages[0].To = other
		both := newSend(a, "live", at(5*time.Second), credit, 2)
		both.messages[0].To, both.messages[1].To = other, stopper
		keyed := withIdem(toStopper(a, "live", 6*time.Second), "k-stop", "h")
		cases := []struct {
			name   string
			send   pendingSend
			fields []string // nil: the send goes
		}{
			{"the opted-out number, same account and environment", toStopper(a, "live", time.Second), []string{"recipients[0]"}},
			{"the same number in the account's test environment", toStopper(a, "test", 2*time.Second), nil},
			{"the same number from another account", toStopper(b, "live", 3*time.Second), nil},
			{"another number of the account", toOther, nil},
			{"a batch naming the number second", both, []string{"recipients[1]"}},
			{"a send with a key", keyed, []string{"recipients[0]"}},
		}
		sends := make([]pendingSend, len(cases))
		for i, c := range cases {
			sends[i] = c.send
		}
		results, err := commitSendsOn(st, ctx, sends)
		if err != nil {
			t.Fatalf("commit: %v", err)
		}
		for i, c := range cases {
			r := results[i]
			if c.fields == nil {
				if r.err != nil || r.replay != nil {
					t.Errorf("%s: %+v, want it sent", c.name, r)
				}
				continue
			}
			var refusal *domain.Refusal
			if !errors.As(r.err, &refusal) || !errors.Is(r.err, ErrOptedOut) {
				t.Errorf("%s: %v, want an opt-out refusal", c.name, r.err)
				continue
			}
			var fields []string
			for _, f := range refusal.Fields {
				fields = append(fields, f.Path)
			}
			if len(fields) != len(c.fields) || fields[0] != c.fields[0] {
				t.Errorf("%s: refused fields %v, want %v", c.name, fields, c.fields)
			}
		}
		// Only the three sends that went were charged.
		checkBalance(t, st, a.ID, 100*credit-2*credit)
		checkBalance(t, st, b.ID, 100*credit-credit)
		// The refused send's key was forgotten: it may be used again.
		again := withIdem(newSend(a, "live", at(7*time.Second), credit, 1), "k-stop", "h2")
		again.messages[0].To = other
		results, err = commitSendsOn(st, ctx, []pendingSend{again})
		if err != nil || results[0] != (sendResult{}) {
			t.Fatalf("reuse of a refused send's key: %+v, %v", results, err)
		}
	})
}
