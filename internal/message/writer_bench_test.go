package message

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/api/notify"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/store"
	"github.com/msgsvc/msgsvc/internal/store/storetest"
	"github.com/msgsvc/msgsvc/internal/tracking"
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

// commitOneRecipientSends writes a group of one-recipient sends of one
// account with the statements intake's group commit makes for them (its
// own benchmark, in internal/intake, measures that commit itself): the
// opt-out read, one reserve, one insert of the messages and their usage.
func commitOneRecipientSends(ctx context.Context, st *store.Store, accountID string, msgs []domain.Message) error {
	return st.Write(ctx, func(tx *store.Tx) error {
		phones := make([]string, len(msgs))
		debits := make([]ledger.Send, len(msgs))
		for i, m := range msgs {
			phones[i] = m.To
			debits[i] = ledger.Send{CampaignID: m.CampaignID, Charges: []ledger.Charge{{MessageID: m.ID, Amount: m.Charged}}, At: m.CreatedAt}
		}
		if _, err := tx.OptedOut(ctx, accountID, domain.Live, phones); err != nil {
			return err
		}
		charged, _, err := ledger.ReserveAll(ctx, tx, accountID, debits)
		if err != nil {
			return err
		}
		for i, ok := range charged {
			if !ok {
				return fmt.Errorf("send %d not charged", i)
			}
		}
		return tracking.InsertCounted(ctx, tx, msgs)
	})
}

// BenchmarkWriterPerMessage is what the single writer does for a message
// on the carrier path, without the HTTP, SMPP and webhook work around it:
// one-recipient sends committed in groups, leased at insert; the record of
// each hand-over with its receipt riding along (SENT and DELIVERED in one
// transaction); and the outcomes of the two webhooks. Groups of eight are
// a busy node's; groups of two, where a node at low concurrency spends
// most per message. It measures the database work that side-by-side runs
// spread over goroutines and other processes, repeatably enough to compare
// small changes (go test -bench WriterPerMessage -count 10, then
// benchstat; or its instructions under callgrind, see docs/benchmarks.md).
func BenchmarkWriterPerMessage(b *testing.B) {
	for _, d := range storetest.Dialects() {
		for _, group := range []int{8, 2} {
			b.Run(fmt.Sprintf("%s/%d", d, group), func(b *testing.B) {
				benchWriter(b, d, group)
			})
		}
	}
}

// benchT0 is when the benchmark's first message is made.
var benchT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// benchWriter runs BenchmarkWriterPerMessage on dialect d, the sends
// committed group at a time.
func benchWriter(b *testing.B, d string, group int) {
	storetest.Need(b, d)
	st := storetest.Open(b, storetest.Migrated(b, d))
	ctx := context.Background()
	acc := domain.Account{ID: id.New(id.Account, benchT0), Name: "Acme", Tier: "pro", Currency: "EUR", CountryCode: "34", CreatedAt: benchT0}
	if err := st.CreateAccount(ctx, acc); err != nil {
		b.Fatal(err)
	}
	if _, err := creditAccount(ctx, st, acc.ID, 1<<50, ledger.TopUp, "opening"); err != nil {
		b.Fatal(err)
	}
	const owner = "node-bench"
	var evs []domain.Event
	var clock time.Time
	tracker := tracking.NewTracker(tracking.Config{Store: st, Now: func() time.Time { return clock },
		Writer: tracking.Bind(st, func(tx *store.Tx) tracking.Tx { return tx },
			tracking.Notify(func(tx *store.Tx) notify.EventTx { return tx },
				&notify.Webhooks[notify.EventTx]{Handoff: keepHandoff[domain.Event]{owner: owner, last: &evs}}))})
	defer tracker.Close()
	n := 0
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	for i := 0; i < b.N; i++ {
		msgs := make([]domain.Message, group)
		for j := range msgs {
			at := benchT0.Add(time.Duration(n) * time.Millisecond)
			mid := id.New(id.Message, at)
			msgs[j] = domain.Message{ID: mid, CampaignID: id.Derive(id.Campaign, mid), AccountID: acc.ID, Env: domain.Live,
				To: fmt.Sprintf("4672%07d", n), CountryCode: "46", Type: domain.SMS, Channel: domain.SMS, Body: "hello",
				Status: domain.Sending, Segments: 1, Encoding: "GSM-7", Credits: 1000, Charged: 1000,
				CallbackURL: "https://hooks.example.com/cb", CreatedAt: at, UpdatedAt: at, ExpiresAt: at.Add(24 * time.Hour),
				LeaseOwner: owner, Attempts: 1, NextAttemptAt: at.Add(time.Minute)}
			n++
		}
		if err := commitOneRecipientSends(ctx, st, acc.ID, msgs); err != nil {
			b.Fatal(err)
		}
		reports := make([]tracking.Report, 0, 2*group)
		for _, m := range msgs {
			ref := "smsc-" + m.ID
			reports = append(reports,
				tracking.Report{Kind: tracking.Accepted, MessageID: m.ID, Provider: "smpp", Ref: ref, LeaseOwner: owner, At: m.CreatedAt},
				tracking.Report{Kind: tracking.Progress, MessageID: m.ID, Provider: "smpp", Ref: ref, Status: domain.Delivered, At: m.CreatedAt, Follows: ref})
		}
		now := msgs[group-1].CreatedAt
		clock, evs = now, nil
		if err := tracker.Apply(ctx, reports); err != nil {
			b.Fatal(err)
		}
		// A message's second event rides behind its first
		// (domain.Event.Then): the worker posts it once the first
		// is delivered, without a claim.
		if len(evs) != group {
			b.Fatalf("%d events handed over, want %d", len(evs), group)
		}
		deliver(b, ctx, st, owner, now, evs)
		var second []domain.Event
		for _, ev := range evs {
			second = append(second, ev.Then...)
		}
		if len(second) != group {
			b.Fatalf("%d events rode behind the first, want %d", len(second), group)
		}
		deliver(b, ctx, st, owner, now, second)
	}
	// CPU time as well as wall time: the commits' system calls make
	// the wall time of a shared machine swing more than the CPU.
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(b.N*group), "µs/msg")
	b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/1e3/float64(b.N*group), "cpu-µs/msg")
}

// deliver records the outcomes of events posted at now, each delivered at
// its first attempt.
func deliver(b *testing.B, ctx context.Context, st *store.Store, owner string, now time.Time, evs []domain.Event) {
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
