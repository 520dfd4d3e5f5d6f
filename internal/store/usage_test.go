package store_test

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/store"
	"github.com/msgsvc/msgsvc/internal/store/storetest"
)

var readsMessages = regexp.MustCompile(`(?i)(on|scan|search) messages\b`)

// A usage report reads the counts kept per day, channel and calling code,
// never the messages: an account whose counts say 10 million messages
// (and no message row at all) gets them back, by a range of the key. The
// time each report takes is logged for docs/benchmarks.md, not asserted.
func TestUsageReadsKeptCounts(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a year of counts")
	}
	storetest.Each(t, func(t *testing.T, st *store.Store, dsn string) {
		ctx := context.Background()
		const days, countries, perKey = 366, 20, 455 // 366 × 3 × 20 keys × 455 ≈ 10 million messages
		first := domain.DayNumber(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		var wantYear, wantMonth int64
		gen := func(account string, holders int) {
			var deltas []domain.UsageDelta
			for d := int64(0); d < days; d++ {
				for _, ch := range domain.Channels {
					for c := range countries {
						deltas = append(deltas, domain.UsageDelta{
							UsageKey:   domain.UsageKey{AccountID: account, Env: domain.Live, Day: first + d, Channel: ch, Country: fmt.Sprint(c + 1)},
							UsageCount: domain.UsageCount{Messages: perKey, Segments: perKey, Credits: perKey * 1_000_000}})
					}
				}
			}
			// Writers of several nodes each keep their own rows: the
			// report sums them.
			for h := range holders {
				w := st
				if h > 0 {
					w = storetest.OpenWith(t, dsn, store.Options{Holder: fmt.Sprintf("node-%d", h)})
				}
				part := deltas
				if holders > 1 {
					part = make([]domain.UsageDelta, len(deltas))
					for i, x := range deltas {
						x.Messages, x.Segments, x.Credits = x.Messages/int64(holders), x.Segments/int64(holders), x.Credits/int64(holders)
						if h == 0 {
							x.Messages += deltas[i].Messages % int64(holders)
							x.Segments += deltas[i].Segments % int64(holders)
							x.Credits += deltas[i].Credits % int64(holders)
						}
						part[i] = x
					}
				}
				for start := 0; start < len(part); start += 4096 {
					chunk := part[start:min(start+4096, len(part))]
					if err := w.Write(ctx, func(tx *store.Tx) error { return tx.AddUsage(ctx, chunk) }); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		holders := 1
		if strings.HasPrefix(dsn, "postgres") {
			holders = 4
		}
		gen("acc_big", holders)
		gen("acc_other", 1)
		wantYear = days * 3 * countries * perKey
		wantMonth = 30 * 3 * countries * perKey

		measure := func(label string) {
			t.Helper()
			for _, tc := range []struct {
				name string
				q    domain.UsageQuery
				want int64
			}{
				{"30 days", domain.UsageQuery{AccountID: "acc_big", Env: domain.Live, From: first + 100, To: first + 129}, wantMonth},
				{"a year", domain.UsageQuery{AccountID: "acc_big", Env: domain.Live, From: first, To: first + days - 1}, wantYear},
			} {
				// The first run prepares the statement and warms the cache; the
				// best of the next three is logged.
				var rows []domain.UsageDelta
				var took time.Duration
				for i := range 4 {
					start := time.Now()
					var err error
					if rows, err = st.UsageByDay(ctx, tc.q); err != nil {
						t.Fatal(err)
					}
					if d := time.Since(start); i > 0 && (took == 0 || d < took) {
						took = d
					}
				}
				var sum int64
				for _, r := range rows {
					sum += r.Messages
				}
				if sum != tc.want {
					t.Fatalf("%s: %d messages, want %d", tc.name, sum, tc.want)
				}
				plan, err := st.ExplainUsage(ctx, tc.q)
				if err != nil {
					t.Fatal(err)
				}
				if readsMessages.MatchString(plan) || !strings.Contains(plan, "usage_days") {
					t.Fatalf("%s: plan\n%s", tc.name, plan)
				}
				// SQLite says how it reads: a range of the key.
				if !strings.HasPrefix(dsn, "postgres") && !strings.Contains(plan, "USING PRIMARY KEY (account_id=? AND env=? AND day>? AND day<?)") {
					t.Fatalf("%s: plan\n%s", tc.name, plan)
				}
				t.Logf("%s%s: %d rows of %d messages in %v; plan:\n%s", tc.name, label, len(rows), sum, took, plan)
			}
		}
		measure("")
		// Folded, the PostgreSQL writers' rows of past days are one per key.
		if strings.HasPrefix(dsn, "postgres") {
			if _, err := st.FoldUsage(ctx, first+days); err != nil {
				t.Fatal(err)
			}
			measure(", folded")
		}
		if got, err := st.UsageByDay(ctx, domain.UsageQuery{AccountID: "acc_big", Env: domain.Test, From: first, To: first + days}); err != nil || len(got) != 0 {
			t.Fatalf("test environment: %d rows, %v", len(got), err)
		}
	})
}

// Messages sent before the usage rows existed are counted once, from the
// messages, by the migration that adds them.
func TestUsageMigrationCountsEarlierMessages(t *testing.T) {
	eachAtVersion(t, 99, func(t *testing.T, ctx context.Context, st *store.Store, _ string, exec func(q string, args ...any)) {
		exec(`INSERT INTO accounts (id, name, tier, currency, country_code, balance_updated_at, webhook_secret,
			tier_rpm, send_rpm, status_rpm, media_rpm, created_at) VALUES ('acc_old', 'x', 'free', 'USD', '55', 0, 'whsec_x',
			1, 1, 1, 1, 0)`)
		exec(`INSERT INTO campaigns (id, account_id, key_id, env, type, total, created_at)
			VALUES ('cmp_old', 'acc_old', 'key_x', 'live', 'SMS', 4, 0)`)
		day := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC).UnixMilli()
		for i, m := range []struct {
			env, channel, country, status string
			segments                      int
			charged                       int64
			at                            int64
		}{
			{"live", "SMS", "55", "DELIVERED", 2, 2_000_000, day},
			{"live", "SMS", "55", "FAILED", 1, 0, day + 1000},
			{"live", "RCS", "44", "READ", 1, 1_000_000, day + 86_400_000},
			{"test", "SMS", "55", "SENT", 1, 0, day},
		} {
			exec(`INSERT INTO messages (id, campaign_id, account_id, env, to_phone, country_code, type, channel, body, status,
				segments, encoding, credits, charged, created_at, updated_at, expires_at)
				VALUES ($1, 'cmp_old', 'acc_old', $2, '5511999990000', $3, $4, $4, 'hi', $5, $6, 'GSM-7', $7, $7, $8, $8, $8)`,
				fmt.Sprintf("msg_old%d", i), m.env, m.country, m.channel, m.status, m.segments, m.charged, m.at)
		}
		if err := st.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		storetest.CheckUsage(t, st, "acc_old")
		got, err := st.UsageByDay(ctx, domain.UsageQuery{AccountID: "acc_old", Env: domain.Live, From: 0, To: 1 << 30})
		if err != nil || len(got) != 2 || got[0].Messages != 2 || got[0].Segments != 3 || got[0].Credits != 2_000_000 ||
			got[0].Statuses.Of(domain.Failed) != 1 || got[1].Channel != domain.RCS || got[1].Country != "44" {
			t.Fatalf("usage after the migration: %+v %v", got, err)
		}
	})
}

// Folding the writers' rows of past days keeps every count and leaves one
// row per key; a writer's later change to a folded day adds a row of its
// own again, folded the next time.
func TestFoldUsage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store, dsn string) {
		ctx := context.Background()
		today := domain.DayNumber(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC))
		key := func(day int64, country string) domain.UsageKey {
			return domain.UsageKey{AccountID: "acc_f", Env: domain.Live, Day: day, Channel: domain.SMS, Country: country}
		}
		one := domain.UsageCount{Messages: 1, Segments: 2, Credits: 3, Statuses: domain.StatusCounts{0, 0, 1}}
		for h := range 3 {
			w := storetest.OpenWith(t, dsn, store.Options{Holder: fmt.Sprintf("node-%d", h)})
			for _, k := range []domain.UsageKey{key(today-3, "55"), key(today-3, "44"), key(today-2, "55"), key(today, "55")} {
				if err := w.Write(ctx, func(tx *store.Tx) error {
					return tx.AddUsage(ctx, []domain.UsageDelta{{UsageKey: k, UsageCount: one}})
				}); err != nil {
					t.Fatal(err)
				}
			}
		}
		before, err := st.KeptUsage(ctx, "acc_f")
		if err != nil {
			t.Fatal(err)
		}
		folded, err := st.FoldUsage(ctx, today-1)
		if err != nil {
			t.Fatal(err)
		}
		after, err := st.KeptUsage(ctx, "acc_f")
		if err != nil || !reflect.DeepEqual(before, after) {
			t.Fatalf("counts changed by the fold:\n%+v\n%+v (%v)", before, after, err)
		}
		wantFolded := int64(3) // the keys of days before yesterday, each now one row
		if !strings.HasPrefix(dsn, "postgres") {
			wantFolded = 0
		}
		if folded != wantFolded {
			t.Errorf("folded %d keys, want %d", folded, wantFolded)
		}
		w := storetest.OpenWith(t, dsn, store.Options{Holder: "node-late"})
		if err := w.Write(ctx, func(tx *store.Tx) error {
			return tx.AddUsage(ctx, []domain.UsageDelta{{UsageKey: key(today-3, "55"), UsageCount: one}})
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.FoldUsage(ctx, today-1); err != nil {
			t.Fatal(err)
		}
		got, err := st.UsageByDay(ctx, domain.UsageQuery{AccountID: "acc_f", Env: domain.Live, From: today - 3, To: today - 3})
		if err != nil || len(got) != 2 || got[1].Country != "55" || got[1].Messages != 4 || got[1].Statuses.Of(domain.Delivered) != 4 {
			t.Fatalf("after a late change and a second fold: %+v %v", got, err)
		}
	})
}

// The operators' ranking sums live charges from a day on, most first.
func TestTopSpenders(t *testing.T) {
	eachStore(t, func(t *testing.T, ctx context.Context, st *store.Store) {
		d := func(acct string, env domain.Environment, day, credits int64) domain.UsageDelta {
			return domain.UsageDelta{UsageKey: domain.UsageKey{AccountID: acct, Env: env, Day: day, Channel: domain.SMS, Country: "55"},
				UsageCount: domain.UsageCount{Messages: 1, Segments: 1, Credits: credits}}
		}
		if err := st.Write(ctx, func(tx *store.Tx) error {
			return tx.AddUsage(ctx, []domain.UsageDelta{d("acc_a", domain.Live, 100, 5), d("acc_a", domain.Live, 101, 5),
				d("acc_b", domain.Live, 101, 20), d("acc_b", domain.Live, 90, 1000), d("acc_c", domain.Test, 101, 0),
				d("acc_c", domain.Live, 100, 1)})
		}); err != nil {
			t.Fatal(err)
		}
		got, err := st.TopSpenders(ctx, 100, 2)
		want := []domain.AccountSpend{{AccountID: "acc_b", Messages: 1, Credits: 20}, {AccountID: "acc_a", Messages: 2, Credits: 10}}
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("top spenders: %+v %v", got, err)
		}
		// The same counts per day: live only, from the day on.
		days, err := st.TrafficByDay(ctx, 100)
		wantDays := []domain.AccountDay{{Day: 100, AccountSpend: domain.AccountSpend{AccountID: "acc_a", Messages: 1, Credits: 5}},
			{Day: 100, AccountSpend: domain.AccountSpend{AccountID: "acc_c", Messages: 1, Credits: 1}},
			{Day: 101, AccountSpend: domain.AccountSpend{AccountID: "acc_a", Messages: 1, Credits: 5}},
			{Day: 101, AccountSpend: domain.AccountSpend{AccountID: "acc_b", Messages: 1, Credits: 20}}}
		if err != nil || !reflect.DeepEqual(days, wantDays) {
			t.Fatalf("traffic by day: %+v %v", days, err)
		}
	})
}
