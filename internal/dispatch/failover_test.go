package dispatch

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/intake"
	"github.com/msgsvc/msgsvc/internal/intake/intaketest"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/providertest"
	"github.com/msgsvc/msgsvc/internal/provider/smpp"
	"github.com/msgsvc/msgsvc/internal/provider/smpp/smpptest"
	"github.com/msgsvc/msgsvc/internal/store/storetest"
)

// TestFailoverWhenPrimarySMSCDies: a route {primary: carrier-a, secondary:
// carrier-b} over SMPP, with carrier-a's SMSC killed (its listener closed,
// so connections are refused, not merely answered badly). The traffic
// sent after the kill reaches carrier-b within a few seconds, although the
// lease (the default 30 s) would let a hand-over wait for a bind for 15 s;
// no message reaches both carriers (the kill comes once carrier-a has
// answered all it took: one it took unanswered would rightly be sent
// again), and each records the carrier that took it.
func TestFailoverWhenPrimarySMSCDies(t *testing.T) {
	const before, after = 20, 300
	for _, dialect := range storetest.Dialects() {
		t.Run(dialect, func(t *testing.T) {
			st := storetest.Open(t, storetest.Migrated(t, dialect))
			quiet := quietLog()
			ctx := context.Background()
			smscA, smscB := smpptest.Start(t), smpptest.Start(t)
			client := func(name, addr string) *smpp.Client {
				c, err := smpp.New(smpp.Config{Name: name, Addr: addr, SystemID: "msgsvc", Password: "secret",
					SourceAddr: "MyShop", RequestTimeout: 2 * time.Second, EnquireLinkInterval: time.Hour},
					&providertest.Sink{}, smpp.WithLogger(quiet))
				if err != nil {
					t.Fatal(err)
				}
				if err := c.Start(ctx); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
					defer cancel()
					_ = c.Close(cctx)
				})
				return c
			}
			a, b := client("carrier-a", smscA.Addr()), client("carrier-b", smscB.Addr())
			routes := provider.NewRouter(nil, []provider.Route{{Name: "sms", Channel: domain.SMS, Primary: a, Secondary: b}})
			f := newFixtureOn(t, st, routes, "", false)
			if _, err := creditAccount(ctx, st, f.caller.Account.ID, 10*(before+after)*ledger.Micro, ledger.TopUp, ""); err != nil {
				t.Fatal(err)
			}
			tracker := newTracker(st, nil, 0)
			t.Cleanup(tracker.Close)
			q := NewDispatchQueue(QueueConfig{Store: st, Owner: "node-1", Batch: 256, Poll: 50 * time.Millisecond, Log: quiet})
			disp := NewDispatcher(DispatcherConfig{Queue: q, Store: st, Routes: routes, Tracker: tracker, Log: quiet})
			svc := intaketest.New(intaketest.Config{Store: st, Picker: routes, AllowPrivateCallbacks: true, Dispatch: q})
			t.Cleanup(svc.Close)
			runCtx, stop := context.WithCancel(ctx)
			ran := make(chan struct{})
			go func() { defer close(ran); disp.Run(runCtx) }()
			defer func() { stop(); <-ran }()

			send := func(from, n int) {
				t.Helper()
				for start := from; start < from+n; start += 100 {
					to := make([]string, 0, 100)
					for i := start; i < min(start+100, from+n); i++ {
						to = append(to, fmt.Sprintf("551199%07d", i))
					}
					if _, err := svc.Send(ctx, f.caller, intaketest.Draft{Recipients: to, Text: "hi", Type: "SMS"}, intake.SendOptions{}); err != nil {
						t.Fatal(err)
					}
				}
			}
			waitFor := func(what string, within time.Duration, ok func() bool) {
				t.Helper()
				deadline := time.Now().Add(within)
				for !ok() {
					if time.Now().After(deadline) {
						t.Fatalf("not within %v: %s (carrier-a took %d, carrier-b %d)", within, what,
							len(smscA.Submits()), len(smscB.Submits()))
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
			send(0, before)
			waitFor("the primary takes the first messages", 20*time.Second, func() bool { return smscA.Answered() == before })

			smscA.Kill()
			send(before, after)
			waitFor("traffic on the secondary after the primary died", 5*time.Second, func() bool { return len(smscB.Submits()) > 0 })
			sent := func() int {
				msgs, err := st.SearchMessages(ctx, domain.MessageFilter{AccountID: f.caller.Account.ID, Status: domain.Sent, Limit: 1001})
				if err != nil {
					t.Fatal(err)
				}
				return len(msgs)
			}
			waitFor("every message sent", 30*time.Second, func() bool { return sent() == before+after })

			took := map[string]string{} // destination → the carrier that took it
			for _, c := range []struct {
				name string
				smsc *smpptest.SMSC
			}{{"carrier-a", smscA}, {"carrier-b", smscB}} {
				for _, to := range c.smsc.Submits() {
					if prev, ok := took[to]; ok {
						t.Errorf("%s submitted to %s and %s", to, prev, c.name)
					}
					took[to] = c.name
				}
			}
			msgs, err := st.SearchMessages(ctx, domain.MessageFilter{AccountID: f.caller.Account.ID, Limit: 1001})
			if err != nil {
				t.Fatal(err)
			}
			onB := 0
			for _, m := range msgs {
				if want := took[m.To]; m.Provider != want {
					t.Errorf("message to %s records provider %q, carried by %q", m.To, m.Provider, want)
				}
				if m.Provider == "carrier-b" {
					onB++
				}
			}
			if onB < after {
				t.Errorf("%d messages on the secondary, want the %d sent after the primary died", onB, after)
			}
		})
	}
}
