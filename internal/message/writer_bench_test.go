package message

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/store"
	"github.com/msgsvc/msgsvc/internal/store/storetest"
	"github.com/msgsvc/msgsvc/internal/tracking"
	"github.com/msgsvc/msgsvc/internal/webhook/notify"
)

// keepHandoff takes the leased rows of committed transactions and keeps
// the last ones: the benchmark plays the dispatcher's and the webhook
// worker's part itself.
type keepHandoff[T any] struct {
	owner string
	last  *[]T
}

func (k keepHandoff[T]) Owner() string      { return k.owner }
func (keepHandoff[T]) Lease() time.Duration { return time.Minute }
func (k keepHandoff[T]) Hand(_ context.Context, items []T) int {
	if k.last != nil {
		*k.last = items
	}
	return len(items)
}

// BenchmarkWriterPerMessage is what the single writer does for a message
// on the carrier path, without the HTTP, SMPP and webhook work around it:
// one-recipient sends committed in groups of eight, leased at insert; the
// record of each hand-over with its receipt riding along (SENT and
// DELIVERED in one transaction); and the outcomes of the two webhooks.
// It measures the database work that side-by-side runs spread over
// goroutines and other processes, repeatably enough to compare small
// changes (go test -bench WriterPerMessage -count 10, then benchstat).
func BenchmarkWriterPerMessage(b *testing.B) {
	for _, d := range storetest.Dialects() {
		b.Run(d, func(b *testing.B) {
			storetest.Need(b, d)
			st := storetest.Open(b, storetest.DSN(b, d))
			ctx := context.Background()
			acc := newAccount(b, st, 1<<50)
			const group, owner = 8, "node-bench"
			svc := &Service{store: Storage{Store: st}, dispatch: keepHandoff[domain.Message]{owner: owner}}
			var evs []domain.Event
			var clock time.Time
			tracker := tracking.NewTracker(tracking.Config{Store: st, Now: func() time.Time { return clock },
				Writer: tracking.Bind(st, func(tx *store.Tx) tracking.Tx { return tx },
					tracking.Notify(func(tx *store.Tx) notify.EventTx { return tx },
						&notify.Webhooks{Handoff: keepHandoff[domain.Event]{owner: owner, last: &evs}}))})
			defer tracker.Close()
			n := 0
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := processCPU()
			for i := 0; i < b.N; i++ {
				sends := make([]pendingSend, group)
				for j := range sends {
					at := t0.Add(time.Duration(n) * time.Millisecond)
					s := newSend(acc, "live", at, 1000, 1)
					m := &s.messages[0]
					m.To = fmt.Sprintf("4672%07d", n)
					s.campaign.ID = id.Derive(id.Campaign, m.ID)
					m.CampaignID, s.single = s.campaign.ID, true
					m.LeaseOwner, m.Attempts, m.NextAttemptAt = owner, 1, at.Add(time.Minute)
					sends[j] = s
					n++
				}
				results, err := svc.commitSends(ctx, sends)
				if err != nil {
					b.Fatal(err)
				}
				reports := make([]tracking.Report, 0, 2*group)
				for j, s := range sends {
					if results[j] != (sendResult{}) {
						b.Fatalf("send refused: %+v", results[j])
					}
					m := s.messages[0]
					ref := "smsc-" + m.ID
					reports = append(reports,
						tracking.Report{Kind: tracking.Accepted, MessageID: m.ID, Provider: "smpp", Ref: ref, LeaseOwner: owner, At: m.CreatedAt},
						tracking.Report{Kind: tracking.Progress, MessageID: m.ID, Provider: "smpp", Ref: ref, Status: domain.Delivered, At: m.CreatedAt, Follows: ref})
				}
				now := sends[group-1].campaign.CreatedAt
				clock, evs = now, nil
				if err := tracker.Apply(ctx, reports); err != nil {
					b.Fatal(err)
				}
				if len(evs) != 2*group {
					b.Fatalf("%d events, want %d", len(evs), 2*group)
				}
				outs := make([]domain.AttemptOutcome, len(evs))
				for j, ev := range evs {
					outs[j] = domain.AttemptOutcome{State: domain.EventDelivered, AccountID: ev.AccountID, URL: ev.URL,
						Attempt: domain.Attempt{ID: id.New(id.Attempt, now), EventID: ev.ID, AttemptedAt: now,
							StatusCode: 200, Duration: time.Millisecond}}
				}
				if err := st.RecordAttempts(ctx, owner, outs); err != nil {
					b.Fatal(err)
				}
			}
			// CPU time as well as wall time: the commits' system calls make
			// the wall time of a shared machine swing more than the CPU.
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(b.N*group), "µs/msg")
			b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/1e3/float64(b.N*group), "cpu-µs/msg")
		})
	}
}
