package store_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/store"
)

func TestMargins(t *testing.T) {
	eachTwoAccounts(t, func(t *testing.T, ctx context.Context, st *store.Store, a, b domain.Account) {
		live, test := newCampaign(a, "live", t0, 4), newCampaign(a, "test", t0, 1)
		other := newCampaign(b, "live", t0, 1)
		handed := func(c domain.Campaign, created time.Time, provider string, status domain.Status, charged, cost int64) domain.Message {
			m := newMessage(c, "447700900123", 0, created)
			m.Provider, m.Status, m.SentAt, m.Charged, m.Cost, m.CostCurrency, m.CountryCode = provider, status, created, charged, cost, "USD", "44"
			m.Segments = 2
			return m
		}
		m1 := handed(live, at(time.Second), "cheap", domain.Delivered, 2*credit, 60_000)
		m2 := handed(live, at(2*time.Second), "cheap", domain.Failed, 2*credit, 60_000)
		m3 := handed(live, at(3*time.Second), "dear", domain.Sent, 2*credit, 100_000)
		m4 := handed(live, at(48*time.Hour), "dear", domain.Delivered, 2*credit, 100_000) // outside the range
		unsent := newMessage(live, "447700900124", 0, at(4*time.Second))                  // NO_ROUTE: never handed over
		unsent.Status, unsent.ErrorCode = domain.Failed, domain.CodeNoRoute
		tm := handed(test, at(5*time.Second), "simulator", domain.Delivered, 0, 0)
		om := handed(other, at(6*time.Second), "dear", domain.Read, credit, 100_000)
		insertMessages(t, st, live, m1, m2, m3, m4, unsent)
		insertMessages(t, st, test, tm)
		insertMessages(t, st, other, om)
		write(t, st, func(ctx context.Context, tx *store.Tx) error {
			return tx.UpdateMessages(ctx, []domain.Message{m1, m2, m3, m4, unsent, tm, om})
		})
		rows, err := st.Margins(ctx, t0, t0, "provider")
		if err != nil {
			t.Fatal(err)
		}
		want := []domain.MarginRow{
			{Key: "cheap", Messages: 2, Segments: 4, Price: 4 * credit, Cost: 120_000, Final: 2, Delivered: 1},
			{Key: "dear", Messages: 2, Segments: 4, Price: 3 * credit, Cost: 200_000, Final: 1, Delivered: 1},
		}
		if !reflect.DeepEqual(rows, want) {
			t.Fatalf("by provider:\n got %+v\nwant %+v", rows, want)
		}
		byAccount, err := st.Margins(ctx, t0, t0.Add(48*time.Hour), "account")
		if err != nil || len(byAccount) != 2 || byAccount[0].Messages+byAccount[1].Messages != 5 {
			t.Fatalf("by account %+v %v", byAccount, err)
		}
		byDay, err := st.Margins(ctx, t0, t0.Add(48*time.Hour), "day")
		if err != nil || len(byDay) != 2 || byDay[0].Key != "20513" || byDay[1].Messages != 1 {
			t.Fatalf("by day %+v %v", byDay, err)
		}
		if _, err := st.Margins(ctx, t0, t0, "route; DROP TABLE messages"); err == nil {
			t.Fatal("unknown grouping accepted")
		}
	})
}
