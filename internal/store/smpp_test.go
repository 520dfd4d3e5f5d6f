package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/store"
)

// addSMPPUser creates a live SMPP user of acc.
func addSMPPUser(t *testing.T, st *store.Store, acc domain.Account, systemID string, maxBinds int) domain.SMPPUser {
	t.Helper()
	u := domain.SMPPUser{ID: id.New(id.SMPPUser, t0), AccountID: acc.ID, Env: domain.Live, SystemID: systemID,
		PasswordHash: "h", MaxBinds: maxBinds, CreatedAt: t0}
	if err := st.CreateSMPPUser(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	return u
}

func TestSMPPUsers(t *testing.T) {
	eachTwoAccounts(t, func(t *testing.T, ctx context.Context, st *store.Store, a, b domain.Account) {
		u := addSMPPUser(t, st, a, "acme1", 4)
		dup := u
		dup.ID, dup.AccountID = id.New(id.SMPPUser, t0), b.ID
		if err := st.CreateSMPPUser(ctx, dup); !errors.Is(err, domain.ErrSystemIDTaken) {
			t.Fatalf("same system_id in another account: %v, want ErrSystemIDTaken", err)
		}
		got, acct, err := st.SMPPUserBySystemID(ctx, "acme1")
		if err != nil || got.ID != u.ID || acct.ID != a.ID || got.MaxBinds != 4 || !got.CreatedAt.Equal(t0) {
			t.Fatalf("by system_id: %+v %s %v", got, acct.ID, err)
		}
		if list, err := st.SMPPUsers(ctx, b.ID); err != nil || len(list) != 0 {
			t.Fatalf("B sees %d users of A (%v)", len(list), err)
		}
		if err := st.RemoveSMPPUser(ctx, b.ID, u.ID); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("B removes A's user: %v, want ErrNotFound", err)
		}
		if present, err := st.SMPPUsersPresent(ctx, []string{u.ID, "smu_gone"}); err != nil || !present[u.ID] || present["smu_gone"] {
			t.Fatalf("present: %v %v", present, err)
		}
		if err := st.RemoveSMPPUser(ctx, a.ID, u.ID); err != nil {
			t.Fatal(err)
		}
		if _, _, err := st.SMPPUserBySystemID(ctx, "acme1"); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("removed user found: %v", err)
		}
	})
}

func TestSMPPItemQueue(t *testing.T) {
	eachAccount(t, 0, func(t *testing.T, ctx context.Context, st *store.Store, a domain.Account) {
		item := func(user string, created time.Time) domain.SMPPItem {
			return domain.SMPPItem{ID: id.New(id.SMPPItem, created), UserID: user, AccountID: a.ID, Env: domain.Live,
				MessageID: "msg_1", Source: "15550001111", Dest: "ACME", ESMClass: 4, Text: "id:msg_1 stat:DELIVRD", State: 2,
				CreatedAt: created, ExpiresAt: created.Add(72 * time.Hour), NextAttemptAt: created}
		}
		old, newer, other := item("smu_a", at(-2*time.Second)), item("smu_a", at(-time.Second)), item("smu_b", at(-time.Second))
		expired := item("smu_a", at(-73*time.Hour))
		write(t, st, func(ctx context.Context, tx *store.Tx) error {
			return tx.InsertSMPPItems(ctx, []domain.SMPPItem{newer, other, old, expired})
		})
		const lease = 30 * time.Second
		got, err := st.ClaimSMPPItems(ctx, map[string]int{"smu_a": 10}, nil, "n1", t0, lease, 10)
		if err != nil || len(got) != 2 || got[0].ID != old.ID || got[1].ID != newer.ID {
			t.Fatalf("claim: %+v %v, want the two live rows of smu_a oldest first", got, err)
		}
		if again, err := st.ClaimSMPPItems(ctx, map[string]int{"smu_a": 10}, nil, "n2", t0.Add(time.Second), lease, 10); err != nil || len(again) != 0 {
			t.Fatalf("leased rows claimed again: %d %v", len(again), err)
		}
		if err := st.AckSMPPItems(ctx, []string{old.ID}); err != nil {
			t.Fatal(err)
		}
		if err := st.ReleaseSMPPItems(ctx, "n1", []string{newer.ID}, t0.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		got, err = st.ClaimSMPPItems(ctx, map[string]int{"smu_a": 10}, nil, "n2", t0.Add(2*time.Second), lease, 10)
		if err != nil || len(got) != 1 || got[0].ID != newer.ID {
			t.Fatalf("after ack and release: %+v %v, want only the released row", got, err)
		}
		// A lapsed lease comes due again without a release; an acked row never.
		got, err = st.ClaimSMPPItems(ctx, map[string]int{"smu_a": 10}, nil, "n3", t0.Add(2*time.Second+lease), lease, 10)
		if err != nil || len(got) != 1 || got[0].ID != newer.ID {
			t.Fatalf("after lapse: %+v %v", got, err)
		}
		// A reply for any bind of the account goes to a user of that
		// account and environment only.
		reply := item("", at(-time.Second))
		reply.ESMClass, reply.State = 0, 0
		write(t, st, func(ctx context.Context, tx *store.Tx) error {
			return tx.InsertSMPPItems(ctx, []domain.SMPPItem{reply})
		})
		later := t0.Add(3*time.Second + lease)
		if got, err := st.ClaimSMPPItems(ctx, map[string]int{"smu_b": 10}, map[string]int{a.ID + ":test": 10, "acc_other:live": 10}, "n4", later, lease, 10); err != nil || len(got) != 1 || got[0].UserID != "smu_b" {
			t.Fatalf("claim for another environment and account: %+v %v", got, err)
		}
		if got, err := st.ClaimSMPPItems(ctx, map[string]int{"smu_a": 10}, map[string]int{a.ID + ":live": 10}, "n4", later, lease, 10); err != nil || len(got) != 1 || got[0].ID != reply.ID {
			t.Fatalf("claim of the account's reply: %+v %v", got, err)
		}
		if n, err := st.PurgeSMPPItems(ctx, t0); err != nil || n != 1 {
			t.Fatalf("purge: %d %v, want the expired row", n, err)
		}
		if n, err := st.PendingSMPPItems(ctx); err != nil || n != 3 {
			t.Fatalf("pending: %d %v", n, err)
		}
	})
}

func TestSMPPBindsCountedAcrossNodes(t *testing.T) {
	eachAccount(t, 0, func(t *testing.T, ctx context.Context, st *store.Store, a domain.Account) {
		u := addSMPPUser(t, st, a, "acme", 2)
		ttl := 30 * time.Second
		reserve := func(bind, node string, now time.Time) bool {
			t.Helper()
			ok, err := st.ReserveSMPPBind(ctx, domain.SMPPBind{ID: bind, UserID: u.ID, Node: node, Addr: "127.0.0.1",
				Type: "bind_transceiver"}, 2, now, now.Add(ttl))
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		if !reserve("b1", "n1", t0) || !reserve("b2", "n2", t0) {
			t.Fatal("two binds of a user with maxBinds 2 refused")
		}
		if reserve("b3", "n1", t0) {
			t.Fatal("a third bind, on any node, accepted")
		}
		if err := st.DropSMPPBind(ctx, "b1"); err != nil {
			t.Fatal(err)
		}
		if !reserve("b3", "n1", t0) {
			t.Fatal("a bind after one closed refused")
		}
		// n2 keeps its bind alive; n1 dies and its bind expires.
		if err := st.RenewSMPPBinds(ctx, "n2", []string{"b2"}, t0.Add(2*ttl)); err != nil {
			t.Fatal(err)
		}
		later := t0.Add(ttl + time.Second)
		if !reserve("b4", "n3", later) || reserve("b5", "n3", later) {
			t.Fatal("a dead node's expired bind still counts, or a renewed one does not")
		}
		if err := st.DropNodeSMPPBinds(ctx, "n3", later); err != nil {
			t.Fatal(err)
		}
		if !reserve("b6", "n4", later) {
			t.Fatal("the binds of a restarted node still count")
		}
	})
}

// One user's backlog does not take the claim of the others: each user's
// rows are claimed up to its own quota, and a user given none (its binds'
// windows are full) gets nothing while the others get theirs.
func TestSMPPClaimFairPerUser(t *testing.T) {
	eachAccount(t, 0, func(t *testing.T, ctx context.Context, st *store.Store, a domain.Account) {
		var rows []domain.SMPPItem
		for i := range 300 {
			created := at(-time.Hour + time.Duration(i)*time.Millisecond)
			rows = append(rows, domain.SMPPItem{ID: id.New(id.SMPPItem, created), UserID: "smu_a", AccountID: a.ID, Env: domain.Live,
				MessageID: "msg_a", Source: "15550001111", Dest: "ACME", ESMClass: 4, Text: "r", State: 2,
				CreatedAt: created, ExpiresAt: created.Add(72 * time.Hour), NextAttemptAt: created})
		}
		var bRows []string
		for i := range 3 {
			created := at(-time.Second + time.Duration(i)*time.Millisecond)
			it := domain.SMPPItem{ID: id.New(id.SMPPItem, created), UserID: "smu_b", AccountID: a.ID, Env: domain.Live,
				MessageID: "msg_b", Source: "15550001111", Dest: "BETA", ESMClass: 4, Text: "r", State: 2,
				CreatedAt: created, ExpiresAt: created.Add(72 * time.Hour), NextAttemptAt: created}
			rows = append(rows, it)
			bRows = append(bRows, it.ID)
		}
		write(t, st, func(ctx context.Context, tx *store.Tx) error { return tx.InsertSMPPItems(ctx, rows) })
		const lease = 30 * time.Second
		got, err := st.ClaimSMPPItems(ctx, map[string]int{"smu_a": 50, "smu_b": 50}, nil, "n1", t0, lease, 256)
		if err != nil {
			t.Fatal(err)
		}
		per := map[string]int{}
		for _, it := range got {
			per[it.UserID]++
		}
		if per["smu_a"] != 50 || per["smu_b"] != 3 {
			t.Fatalf("claimed %v, want 50 of smu_a (its quota) and all 3 of smu_b", per)
		}
		if err := st.ReleaseSMPPItems(ctx, "n1", bRows, t0); err != nil {
			t.Fatal(err)
		}
		got, err = st.ClaimSMPPItems(ctx, map[string]int{"smu_a": 0, "smu_b": 100}, nil, "n1", t0, lease, 2)
		if err != nil || len(got) != 2 || got[0].UserID != "smu_b" || got[1].UserID != "smu_b" {
			t.Fatalf("with smu_a's window full and a limit of 2: %+v %v, want 2 rows of smu_b", got, err)
		}
	})
}

// SMPP users' system_ids are unique whatever their case, so that no two
// look alike; a bind names its user exactly as it was made.
func TestSMPPSystemIDTwinsByCase(t *testing.T) {
	eachTwoAccounts(t, func(t *testing.T, ctx context.Context, st *store.Store, a, b domain.Account) {
		u := addSMPPUser(t, st, a, "Acme", 4)
		for _, twin := range []string{"acme", "ACME", "aCmE"} {
			dup := u
			dup.ID, dup.AccountID, dup.SystemID = id.New(id.SMPPUser, t0), b.ID, twin
			if err := st.CreateSMPPUser(ctx, dup); !errors.Is(err, domain.ErrSystemIDTaken) {
				t.Fatalf("%q beside %q: %v, want ErrSystemIDTaken", twin, u.SystemID, err)
			}
		}
		if _, _, err := st.SMPPUserBySystemID(ctx, "acme"); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("a bind as acme finds Acme: %v", err)
		}
	})
}

// Operators see an account's SMPP users' open binds on every node, when
// each last bound, and its newest refusals, a bounded number per user,
// and nothing of another account's.
func TestSMPPActivity(t *testing.T) {
	eachTwoAccounts(t, func(t *testing.T, ctx context.Context, st *store.Store, a, b domain.Account) {
		ua, ub := addSMPPUser(t, st, a, "alpha", 4), addSMPPUser(t, st, b, "beta", 4)
		if ok, err := st.ReserveSMPPBind(ctx, domain.SMPPBind{ID: "n1/1", UserID: ua.ID, Node: "n1", Addr: "192.0.2.7",
			Type: "bind_receiver"}, 4, t0, t0.Add(30*time.Second)); err != nil || !ok {
			t.Fatalf("reserve: %v %v", ok, err)
		}
		for i := range store.RefusalsKept + 5 {
			when := t0.Add(time.Duration(i) * time.Second)
			for _, u := range []domain.SMPPUser{ua, ub} {
				if err := st.RecordSMPPRefusal(ctx, domain.SMPPRefusal{ID: id.New(id.SMPPRefusal, when), UserID: u.ID,
					AccountID: u.AccountID, At: when, Addr: "198.51.100.9", Command: "bind_transmitter",
					Status: "ESME_RBINDFAIL", Reason: "wrong password"}); err != nil {
					t.Fatal(err)
				}
			}
		}
		got, err := st.SMPPActivity(ctx, a.ID, t0.Add(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := got[ub.ID]; ok || len(got) != 1 {
			t.Fatalf("account A's activity shows %d users, B's among them: %v", len(got), ok)
		}
		act := got[ua.ID]
		if len(act.Binds) != 1 || act.Binds[0].Addr != "192.0.2.7" || act.Binds[0].Type != "bind_receiver" ||
			!act.Binds[0].BoundAt.Equal(t0) || !act.LastBoundAt.Equal(t0) {
			t.Fatalf("binds %+v, last bound %v", act.Binds, act.LastBoundAt)
		}
		newest := t0.Add(time.Duration(store.RefusalsKept+4) * time.Second)
		if len(act.Refusals) != store.RefusalsKept || !act.Refusals[0].At.Equal(newest) ||
			act.Refusals[0].Reason != "wrong password" || act.Refusals[0].Addr != "198.51.100.9" {
			t.Fatalf("%d refusals, newest %+v; want the newest %d", len(act.Refusals), act.Refusals[0], store.RefusalsKept)
		}
		// A bind past its lease (its node died) is not shown as open.
		if got, err := st.SMPPActivity(ctx, a.ID, t0.Add(time.Minute)); err != nil || len(got[ua.ID].Binds) != 0 {
			t.Fatalf("an expired bind shown: %+v %v", got[ua.ID].Binds, err)
		}
	})
}
