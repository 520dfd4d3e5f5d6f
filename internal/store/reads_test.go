package store_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/store"
	"github.com/msgsvc/msgsvc/internal/store/storetest"
)

const (
	phoneA = "34600000001"
	phoneB = "34600000002"
)

// readFixture is a small message history shared by the read tests.
type readFixture struct {
	acc, other domain.Account
	a, b, o    domain.Campaign
	m          []domain.Message // campaign a, one minute apart from t0
	n          []domain.Message // campaign b, from t0+10m
	o0         domain.Message   // the other account's
}

func newReadFixture(t *testing.T, st *store.Store) readFixture {
	t.Helper()
	var f readFixture
	f.acc, f.other = newAccount(t, st, 0), newAccount(t, st, 0)
	f.a = newCampaign(f.acc, "live", t0, 5)
	for i, s := range []struct {
		status  domain.Status
		phone   string
		expires time.Duration
	}{
		{"SENDING", phoneA, time.Hour}, {"SENT", phoneA, time.Hour}, {"DELIVERED", phoneB, time.Hour},
		{"FAILED", phoneB, time.Hour}, {"SENDING", phoneB, 2 * time.Hour},
	} {
		m := newMessage(f.a, s.phone, 0, at(time.Duration(i)*time.Minute))
		m.Status, m.ExpiresAt = s.status, at(s.expires)
		f.m = append(f.m, m)
	}
	insertMessages(t, st, f.a, f.m...)
	f.b = newCampaign(f.acc, "live", at(10*time.Minute), 2)
	for i, status := range []domain.Status{domain.Sent, domain.Sending} {
		m := newMessage(f.b, phoneB, 0, at(10*time.Minute+time.Duration(i)*time.Minute))
		m.Status = status
		f.n = append(f.n, m)
	}
	insertMessages(t, st, f.b, f.n...)
	f.o = newCampaign(f.other, "live", at(20*time.Minute), 1)
	f.o0 = newMessage(f.o, phoneA, 0, at(20*time.Minute))
	insertMessages(t, st, f.o, f.o0)
	return f
}

func TestMessageAndCampaignReads(t *testing.T) {
	eachStore(t, func(t *testing.T, ctx context.Context, st *store.Store) {
		f := newReadFixture(t, st)
		msgs := []struct {
			name, account string
			env           domain.Environment
			id            string
			want          *domain.Message
		}{
			{"own message", f.acc.ID, domain.Live, f.m[2].ID, &f.m[2]},
			{"other account's message", f.other.ID, domain.Live, f.m[2].ID, nil},
			{"other environment's message", f.acc.ID, domain.Test, f.m[2].ID, nil},
			{"unknown", f.acc.ID, domain.Live, "msg_missing", nil},
		}
		for _, tc := range msgs {
			got, err := st.Message(ctx, tc.account, tc.env, tc.id)
			if tc.want == nil {
				wantErr(t, tc.name, err, domain.ErrNotFound)
			} else if err != nil || !reflect.DeepEqual(got, *tc.want) {
				t.Errorf("%s: %+v (%v)", tc.name, got, err)
			}
		}
		camps := []struct {
			name, account string
			env           domain.Environment
			id            string
			want          *domain.Campaign
		}{
			{"own campaign", f.acc.ID, domain.Live, f.a.ID, &f.a},
			{"other account's campaign", f.other.ID, domain.Live, f.a.ID, nil},
			{"other environment's campaign", f.acc.ID, domain.Test, f.a.ID, nil},
			{"unknown", f.acc.ID, domain.Live, "cmp_missing", nil},
		}
		for _, tc := range camps {
			got, err := st.Campaign(ctx, tc.account, tc.env, tc.id)
			if tc.want == nil {
				wantErr(t, tc.name, err, domain.ErrNotFound)
			} else if err != nil || got != *tc.want {
				t.Errorf("%s: %+v (%v)", tc.name, got, err)
			}
		}

		counts := []struct {
			campaign string
			want     map[domain.Status]int
		}{
			{f.a.ID, map[domain.Status]int{"SENDING": 2, "SENT": 1, "DELIVERED": 1, "FAILED": 1}},
			{f.b.ID, map[domain.Status]int{"SENT": 1, "SENDING": 1}},
			{"cmp_missing", map[domain.Status]int{}},
		}
		for _, tc := range counts {
			got, err := st.CampaignCounts(ctx, tc.campaign)
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("counts of %s: %v (%v), want %v", tc.campaign, got, err, tc.want)
			}
		}

		cancelable, err := st.CancelableMessageIDs(ctx, f.a.ID)
		if want := []string{f.m[0].ID, f.m[4].ID}; err != nil || !reflect.DeepEqual(cancelable, want) {
			t.Errorf("cancelable: %v (%v), want %v", cancelable, err, want)
		}

		// Paging walks the campaign in id order without gaps or repeats.
		var pages [][]string
		for after := ""; ; {
			page, err := st.CampaignMessages(ctx, f.a.ID, after, 2)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) == 0 {
				break
			}
			pages = append(pages, ids(page))
			after = page[len(page)-1].ID
		}
		want := [][]string{{f.m[0].ID, f.m[1].ID}, {f.m[2].ID, f.m[3].ID}, {f.m[4].ID}}
		if !reflect.DeepEqual(pages, want) {
			t.Errorf("campaign pages %v, want %v", pages, want)
		}
	})
}

func TestSearchMessages(t *testing.T) {
	eachStore(t, func(t *testing.T, ctx context.Context, st *store.Store) {
		f := newReadFixture(t, st)
		m, n := f.m, f.n
		tests := []struct {
			name   string
			filter domain.MessageFilter
			want   []domain.Message
		}{
			{"all, newest first", domain.MessageFilter{}, []domain.Message{n[1], n[0], m[4], m[3], m[2], m[1], m[0]}},
			{"phone", domain.MessageFilter{Phone: phoneA}, []domain.Message{m[1], m[0]}},
			{"status", domain.MessageFilter{Status: "SENDING"}, []domain.Message{n[1], m[4], m[0]}},
			{"campaign", domain.MessageFilter{CampaignID: f.b.ID}, []domain.Message{n[1], n[0]}},
			{"from inclusive, to exclusive", domain.MessageFilter{From: at(2 * time.Minute), To: at(4 * time.Minute)},
				[]domain.Message{m[3], m[2]}},
			{"cursor and limit", domain.MessageFilter{Before: m[3].ID, Limit: 2}, []domain.Message{m[2], m[1]}},
			{"limit over the maximum falls back to the default", domain.MessageFilter{Limit: 5000}, []domain.Message{n[1], n[0], m[4], m[3], m[2], m[1], m[0]}},
			{"filters combine", domain.MessageFilter{Phone: phoneB, Status: "SENT"}, []domain.Message{n[0]}},
			{"no match", domain.MessageFilter{Phone: "34999999999"}, nil},
		}
		for _, tc := range tests {
			tc.filter.AccountID = f.acc.ID
			got, err := st.SearchMessages(ctx, tc.filter)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if !reflect.DeepEqual(ids(got), ids(tc.want)) {
				t.Errorf("%s: %v, want %v", tc.name, ids(got), ids(tc.want))
			}
		}
		got, err := st.SearchMessages(ctx, domain.MessageFilter{AccountID: f.other.ID, Phone: phoneA})
		if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], f.o0) {
			t.Errorf("other account's search: %+v (%v)", got, err)
		}
	})
}

func TestExpiredMessageIDs(t *testing.T) {
	eachStore(t, func(t *testing.T, ctx context.Context, st *store.Store) {
		f := newReadFixture(t, st)
		tests := []struct {
			name  string
			now   time.Time
			limit int
			want  []string // with a limit below its length: any limit of them
		}{
			{"nothing expired yet", at(time.Hour - time.Millisecond), 100, nil},
			// m[2] DELIVERED and m[3] FAILED expire too but are closed.
			{"open messages at their expiry", at(time.Hour), 100, []string{f.m[0].ID, f.m[1].ID}},
			{"later", at(2 * time.Hour), 100, []string{f.m[0].ID, f.m[1].ID, f.m[4].ID}},
			{"limit", at(2 * time.Hour), 2, []string{f.m[0].ID, f.m[1].ID, f.m[4].ID}},
		}
		for _, tc := range tests {
			got, err := st.ExpiredMessageIDs(ctx, tc.now, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			allowed := map[string]bool{}
			for _, v := range tc.want {
				allowed[v] = true
			}
			for _, v := range got {
				if !allowed[v] {
					t.Errorf("%s: unexpected %s", tc.name, v)
				}
				delete(allowed, v) // a repeat shows up as unexpected
			}
			if len(got) != min(tc.limit, len(tc.want)) {
				t.Errorf("%s: %v, want %d of %v", tc.name, got, min(tc.limit, len(tc.want)), tc.want)
			}
		}
	})
}

func TestStaleMessages(t *testing.T) {
	eachAccount(t, 0, func(t *testing.T, ctx context.Context, st *store.Store, acc domain.Account) {
		c := newCampaign(acc, "live", t0, 7)
		mk := func(i int, status domain.Status, channel domain.Channel, provider, phone string, updated time.Duration) domain.Message {
			m := newMessage(c, phone, 0, at(time.Duration(i)*time.Millisecond))
			m.Status, m.Channel, m.Type, m.Provider, m.UpdatedAt = status, channel, channel, provider, at(updated)
			return m
		}
		sentSMS := mk(0, "SENT", "SMS", "sim", "34600000001", time.Minute)
		deliveredSMS := mk(1, "DELIVERED", "SMS", "sim", "34600000002", 0)
		deliveredWA := mk(2, "DELIVERED", "WHATSAPP", "sim", "34600000003", 0)
		silent := mk(3, "SENT", "SMS", "sim", "34600000005", 2*time.Minute)
		recent := mk(4, "SENT", "SMS", "sim", "34600000006", time.Hour)
		otherProvider := mk(5, "SENT", "SMS", "smpp", "34600000007", 0)
		readWA := mk(6, "READ", "WHATSAPP", "sim", "34600000008", 0)
		insertMessages(t, st, c, sentSMS, deliveredSMS, deliveredWA, silent, recent, otherProvider, readWA)

		tests := []struct {
			name, skip string
			limit      int
			want       []domain.Message
		}{
			{"open SENT and DELIVERED with read receipts, oldest change first", "0005", 100,
				[]domain.Message{deliveredWA, sentSMS}},
			{"limit", "0005", 1, []domain.Message{deliveredWA}},
			{"another suffix", "0001", 100, []domain.Message{deliveredWA, silent}},
			{"no suffix skips nothing", "", 100, []domain.Message{deliveredWA, sentSMS, silent}},
		}
		for _, tc := range tests {
			got, err := st.StaleMessages(ctx, "sim", at(time.Hour), tc.skip, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s: %v, want %v", tc.name, ids(got), ids(tc.want))
			}
		}
	})
}

func TestJournalSubmissions(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store, dsn string) {
		ctx := context.Background()
		at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
		fresh, err := st.JournalSubmissions(ctx, "node-a", []string{"m1", "m2"}, at)
		if err != nil || !fresh["m1"] || !fresh["m2"] {
			t.Fatalf("first hand-over: %v %v", fresh, err)
		}
		fresh, err = st.JournalSubmissions(ctx, "node-b", []string{"m2", "m3"}, at)
		if err != nil || fresh["m2"] || !fresh["m3"] {
			t.Fatalf("second hand-over: %v %v", fresh, err)
		}
	})
}
