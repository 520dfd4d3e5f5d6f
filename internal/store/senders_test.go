package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/store"
)

func addSender(t *testing.T, st *store.Store, acct string, ch domain.Channel, value, status string) (domain.Sender, error) {
	t.Helper()
	sd := domain.Sender{ID: id.New(id.Sender, t0), AccountID: acct, Channel: ch, Value: value, Status: status, CreatedAt: t0}
	return sd, st.AddSender(context.Background(), sd)
}

// A value is approved for one account per channel, sender IDs compared
// case-insensitively; a pending or rejected sender is neither usable nor
// an owner of inbound messages.
func TestSenderHeldByOneAccount(t *testing.T) {
	eachTwoAccounts(t, func(t *testing.T, ctx context.Context, st *store.Store, a, b domain.Account) {
		if _, err := addSender(t, st, a.ID, domain.SMS, "MyShop", domain.SenderApproved); err != nil {
			t.Fatal(err)
		}
		for _, status := range []string{domain.SenderPending, domain.SenderApproved} {
			if _, err := addSender(t, st, b.ID, domain.SMS, "MYSHOP", status); !errors.Is(err, domain.ErrSenderTaken) {
				t.Fatalf("B %s MYSHOP: %v, want ErrSenderTaken", status, err)
			}
		}
		// Another channel is another value.
		if _, err := addSender(t, st, b.ID, domain.RCS, "myshop", domain.SenderPending); err != nil {
			t.Fatal(err)
		}
		// B asked for a number before A held it: deciding B's request late is refused.
		pend, err := addSender(t, st, b.ID, domain.WhatsApp, "15550001111", domain.SenderPending)
		if err != nil {
			t.Fatal(err)
		}
		if owners, _ := st.SenderOwners(ctx, domain.WhatsApp, "15550001111"); len(owners) != 0 {
			t.Fatalf("a pending sender owns inbound: %v", owners)
		}
		if got, _ := st.Account(ctx, b.ID); len(got.Senders[domain.WhatsApp].Values) != 0 {
			t.Fatalf("a pending sender is usable: %+v", got.Senders)
		}
		held, err := addSender(t, st, a.ID, domain.WhatsApp, "15550001111", domain.SenderPending)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.DecideSender(ctx, domain.Sender{ID: held.ID, Status: domain.SenderApproved, DecidedBy: "op", DecidedAt: t0}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.DecideSender(ctx, domain.Sender{ID: held.ID, Status: domain.SenderRejected}); !errors.Is(err, domain.ErrSenderDecided) {
			t.Fatalf("decided twice: %v", err)
		}
		if _, err := st.DecideSender(ctx, domain.Sender{ID: pend.ID, Status: domain.SenderApproved}); !errors.Is(err, domain.ErrSenderTaken) {
			t.Fatalf("approve a held number for B: %v", err)
		}
		if owners, _ := st.SenderOwners(ctx, domain.WhatsApp, "15550001111"); len(owners) != 1 || owners[0] != a.ID {
			t.Fatalf("owners %v, want only A", owners)
		}
		if owners, _ := st.SenderOwners(ctx, domain.SMS, "myshop"); len(owners) != 1 || owners[0] != a.ID {
			t.Fatalf("owners of myshop %v, want A (case-insensitive)", owners)
		}
		rej, err := st.DecideSender(ctx, domain.Sender{ID: pend.ID, Status: domain.SenderRejected, Reason: "not yours", DecidedBy: "op", DecidedAt: t0})
		if err != nil || rej.Status != domain.SenderRejected || rej.Reason != "not yours" || rej.AccountID != b.ID {
			t.Fatalf("reject: %+v %v", rej, err)
		}
		got, _ := st.Account(ctx, a.ID)
		if v := got.Senders[domain.WhatsApp].Values; len(v) != 1 || v[0] != "15550001111" {
			t.Fatalf("A's approved senders: %+v", got.Senders)
		}
		pending, err := st.PendingSenders(ctx)
		if err != nil || len(pending) != 1 || pending[0].Channel != domain.RCS {
			t.Fatalf("pending %+v %v", pending, err)
		}
		// Once A lets the value go, B may have it.
		if err := st.RemoveSender(ctx, a.ID, held.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := addSender(t, st, b.ID, domain.WhatsApp, "15550001111", domain.SenderApproved); !errors.Is(err, domain.ErrConflict) {
			t.Fatalf("B's rejected row still names the value: %v, want ErrConflict", err)
		}
	})
}

// Existing senders become pending, except in accounts no owner or admin
// could have added them to (an operator did); a value several accounts
// held is nobody's until an operator decides.
func TestSenderApprovalMigration(t *testing.T) {
	eachAtVersion(t, 69, func(t *testing.T, ctx context.Context, st *store.Store, _ string, exec func(q string, args ...any)) {
		for _, acct := range []string{"acc_self", "acc_ops", "acc_ops2"} {
			exec(`INSERT INTO accounts (id, name, tier, currency, country_code, balance_updated_at, webhook_secret,
				tier_rpm, send_rpm, status_rpm, media_rpm, created_at, senders) VALUES ($1, 'x', 'free', 'USD', '1', 0, 'whsec_x',
				1, 1, 1, 1, 0, '{"SMS":{"values":["Stale"]}}')`, acct)
		}
		exec(`INSERT INTO users (id, account_id, email, role, password_hash, created_at)
			VALUES ('usr_1', 'acc_self', 'a@example.com', 'admin', 'x', 0)`)
		rows := [][3]string{{"snd_1", "acc_self", "Acme"}, {"snd_2", "acc_ops", "Bolt"}, {"snd_3", "acc_ops", "Shared"},
			{"snd_4", "acc_ops2", "SHARED"}}
		for _, r := range rows {
			exec(`INSERT INTO senders (id, account_id, channel, value, is_default, created_at) VALUES ($1, $2, 'SMS', $3, 0, 0)`,
				r[0], r[1], r[2])
		}
		if err := st.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"snd_1": domain.SenderPending, "snd_2": domain.SenderApproved, "snd_3": domain.SenderPending,
			"snd_4": domain.SenderPending}
		for sid, status := range want {
			sd, err := st.Sender(ctx, sid)
			if err != nil || sd.Status != status {
				t.Fatalf("%s: %+v %v, want %s", sid, sd, err, status)
			}
		}
		for acct, values := range map[string][]string{"acc_self": nil, "acc_ops": {"Bolt"}, "acc_ops2": nil} {
			a, err := st.Account(ctx, acct)
			if err != nil {
				t.Fatal(err)
			}
			got := a.Senders[domain.SMS].Values
			if b, _ := json.Marshal(got); len(got) != len(values) || len(values) > 0 && got[0] != values[0] {
				t.Fatalf("%s approved senders %s, want %v", acct, b, values)
			}
		}
	})
}

// Twins stored before senders were compared in their canonical form: the
// keys are rewritten so that the uniqueness check sees them; a twin another
// account held approved waits for an operator again (the canonical original
// keeps it); an account's own twin request goes; the values themselves are
// kept as they were.
func TestSenderCanonicalKeysMigration(t *testing.T) {
	eachAtVersion(t, 130, func(t *testing.T, ctx context.Context, st *store.Store, _ string, exec func(q string, args ...any)) {
		for _, acct := range []string{"acc_a", "acc_b"} {
			exec(`INSERT INTO accounts (id, name, tier, currency, country_code, balance_updated_at, webhook_secret,
				tier_rpm, send_rpm, status_rpm, media_rpm, created_at) VALUES ($1, 'x', 'free', 'USD', '1', 0, 'whsec_x',
				1, 1, 1, 1, 0)`, acct)
		}
		rows := []struct{ id, acct, value, status string }{
			{"snd_1", "acc_b", "BetaShop", "APPROVED"},
			{"snd_2", "acc_b", "15550001111", "APPROVED"},
			{"snd_3", "acc_a", "BetaShop ", "APPROVED"},
			{"snd_4", "acc_a", "0015550001111", "APPROVED"},
			{"snd_5", "acc_a", " Beta  Shop", "PENDING"},
			{"snd_6", "acc_a", "beta  shop", "PENDING"},   // A's own twin of snd_5
			{"snd_7", "acc_a", "015550001111", "PENDING"}, // A's own twin of snd_4
			{"snd_8", "acc_a", "Alpha  Co", "APPROVED"},   // nobody's twin: kept as it is
		}
		for _, r := range rows {
			exec(`INSERT INTO senders (id, account_id, channel, value, is_default, created_at, status, value_key)
				VALUES ($1, $2, 'SMS', $3, 0, 0, $4, lower($3))`, r.id, r.acct, r.value, r.status)
		}
		if err := st.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"snd_1": domain.SenderApproved, "snd_2": domain.SenderApproved, "snd_3": domain.SenderPending,
			"snd_4": domain.SenderPending, "snd_5": domain.SenderPending, "snd_8": domain.SenderApproved}
		for sid, status := range want {
			sd, err := st.Sender(ctx, sid)
			if err != nil || sd.Status != status {
				t.Fatalf("%s: %+v %v, want %s", sid, sd, err, status)
			}
		}
		for _, sid := range []string{"snd_6", "snd_7"} {
			if _, err := st.Sender(ctx, sid); !errors.Is(err, domain.ErrNotFound) {
				t.Fatalf("A's own twin request %s was kept: %v", sid, err)
			}
		}
		// Approving any twin of B's is refused now; the keys are the Go code's.
		for _, sid := range []string{"snd_3", "snd_4"} {
			if _, err := st.DecideSender(ctx, domain.Sender{ID: sid, Status: domain.SenderApproved, DecidedBy: "op", DecidedAt: t0}); !errors.Is(err, domain.ErrSenderTaken) {
				t.Fatalf("approving %s: %v, want ErrSenderTaken", sid, err)
			}
		}
		for _, v := range []string{"betashop", " BETASHOP ", "+15550001111"} {
			if owners, _ := st.SenderOwners(ctx, domain.SMS, v); len(owners) != 1 || owners[0] != "acc_b" {
				t.Fatalf("owners of %q: %v", v, owners)
			}
		}
		if owners, _ := st.SenderOwners(ctx, domain.SMS, "alpha co"); len(owners) != 1 || owners[0] != "acc_a" {
			t.Fatalf("owners of alpha co: %v", owners)
		}
		a, _ := st.Account(ctx, "acc_a")
		if got := a.Senders[domain.SMS].Values; len(got) != 1 || got[0] != "Alpha  Co" {
			t.Fatalf("A's approved senders after the migration: %v", got)
		}
	})
}
