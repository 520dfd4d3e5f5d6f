package store_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/store"
)

// The migration that lets a message name a campaign without a row drops
// the foreign key and nothing else: messages written before it stay, the
// database checks clean, and a connection that was open during the
// migration no longer enforces the key either.
func TestRowlessCampaignMigration(t *testing.T) {
	eachAtVersion(t, 111, func(t *testing.T, ctx context.Context, st *store.Store, dsn string, must func(q string, args ...any)) {
		exec := func(st *store.Store, q string, args ...any) error {
			return st.Exec(ctx, q, args...)
		}
		must(`INSERT INTO accounts (id, name, tier, currency, country_code, balance_updated_at, webhook_secret,
			tier_rpm, send_rpm, status_rpm, media_rpm, created_at) VALUES ('acc_old', 'x', 'free', 'USD', '55', 0, 'whsec_x',
			1, 1, 1, 1, 0)`)
		must(`INSERT INTO campaigns (id, account_id, key_id, env, type, total, created_at)
			VALUES ('cmp_old', 'acc_old', 'key_x', 'live', 'SMS', 1, 0)`)
		insert := func(st *store.Store, msgID, campaignID string) error {
			return exec(st, `INSERT INTO messages (id, campaign_id, account_id, env, to_phone, country_code, type, channel,
				body, status, segments, encoding, credits, charged, created_at, updated_at, expires_at)
				VALUES ($1, $2, 'acc_old', 'live', '5511999990000', '55', 'SMS', 'SMS', 'hi', 'SENT', 1, 'GSM-7', 0, 0, 1, 1, 1)`,
				msgID, campaignID)
		}
		if err := insert(st, "msg_old", "cmp_old"); err != nil {
			t.Fatal(err)
		}
		if err := insert(st, "msg_early", "cmp_early"); err == nil {
			t.Fatal("before the migration a message without its campaign's row was written")
		}
		var before []string
		if st.Dialect() == store.SQLite {
			var err error
			if before, err = st.QueryStrings(ctx, `SELECT sql FROM sqlite_master WHERE name = 'messages'`); err != nil {
				t.Fatal(err)
			}
		}
		// Another store on the same database, with its schema read
		// before the migration.
		other, err := store.Open(ctx, dsn, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		if err := insert(other, "msg_other0", "cmp_old"); err != nil {
			t.Fatal(err)
		}
		// Up to the row-less campaigns' migration: later ones add columns
		// to messages, which the comparison of its schema below is not about.
		if err := st.MigrateTo(ctx, 120); err != nil {
			t.Fatal(err)
		}
		for i, s := range []*store.Store{st, other} {
			if err := insert(s, "msg_new"+string(rune('0'+i)), "cmp_new"); err != nil {
				t.Fatalf("store %d: a message of a row-less campaign: %v", i, err)
			}
		}
		if n, err := st.CountRows(ctx, "messages"); err != nil || n != 4 {
			t.Fatalf("%d messages (%v), want 4", n, err)
		}
		if st.Dialect() == store.SQLite {
			after, err := st.QueryStrings(ctx, `SELECT sql FROM sqlite_master WHERE name = 'messages'`)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Replace(before[0], " REFERENCES campaigns(id)", "", 1)
			if len(after) != 1 || after[0] != want || want == before[0] {
				t.Fatalf("messages is now\n%v\nwant\n%s", after, want)
			}
			for _, check := range []string{`PRAGMA integrity_check`, `PRAGMA foreign_key_check`} {
				got, err := st.QueryStrings(ctx, check)
				if err != nil {
					t.Fatalf("%s: %v", check, err)
				}
				if check == `PRAGMA integrity_check` && !reflect.DeepEqual(got, []string{"ok"}) ||
					check == `PRAGMA foreign_key_check` && len(got) != 0 {
					t.Fatalf("%s: %v", check, got)
				}
			}
			return
		}
		fks, err := st.QueryStrings(ctx, `SELECT constraint_name FROM information_schema.table_constraints
			WHERE table_schema = current_schema() AND table_name = 'messages' AND constraint_type = 'FOREIGN KEY'`)
		if err != nil || len(fks) != 0 {
			t.Fatalf("foreign keys of messages: %v (%v)", fks, err)
		}
	})
}

// A campaign named after its only message has no row and is read from the
// message; the message must name it back, and only its own account and
// environment find it.
func TestCampaignReadFromItsMessage(t *testing.T) {
	eachTwoAccounts(t, func(t *testing.T, ctx context.Context, st *store.Store, acc, other domain.Account) {
		m := newMessage(domain.Campaign{AccountID: acc.ID, Env: domain.Live, CallbackURL: "https://hooks.example.com/cb"},
			"34600000001", 0, at(time.Minute))
		m.CampaignID = id.Derive(id.Campaign, m.ID)
		m.Type, m.Channel = domain.WhatsApp, domain.WhatsApp
		// A message of a campaign with a row, whose id a caller could turn
		// into a campaign id.
		c := newCampaign(acc, domain.Live, at(2*time.Minute), 1)
		inRow := newMessage(c, "34600000002", 0, at(2*time.Minute))
		insertMessages(t, st, c, inRow)
		write(t, st, func(ctx context.Context, tx *store.Tx) error { return tx.InsertMessages(ctx, []domain.Message{m}) })
		if n, err := st.CountRows(ctx, "campaigns"); err != nil || n != 1 {
			t.Fatalf("%d campaigns rows (%v), want 1", n, err)
		}
		got, err := st.Campaign(ctx, acc.ID, domain.Live, m.CampaignID)
		want := domain.Campaign{ID: m.CampaignID, AccountID: acc.ID, Env: domain.Live, Type: domain.WhatsApp,
			CallbackURL: "https://hooks.example.com/cb", Total: 1, CreatedAt: m.CreatedAt}
		if err != nil || got != want {
			t.Fatalf("derived campaign: %+v (%v), want %+v", got, err, want)
		}
		if got, err := st.Campaign(ctx, acc.ID, domain.Live, c.ID); err != nil || got != c {
			t.Fatalf("campaign with a row: %+v (%v), want %+v", got, err, c)
		}
		for _, tc := range []struct {
			name, account string
			env           domain.Environment
			id            string
		}{
			{"other account", other.ID, domain.Live, m.CampaignID},
			{"other environment", acc.ID, domain.Test, m.CampaignID},
			{"made from a message of another campaign", acc.ID, domain.Live, id.Derive(id.Campaign, inRow.ID)},
			{"no body", acc.ID, domain.Live, "cmp"},
			{"the message's own id", acc.ID, domain.Live, m.ID},
		} {
			_, err := st.Campaign(ctx, tc.account, tc.env, tc.id)
			wantErr(t, tc.name, err, domain.ErrNotFound)
		}
	})
}
