package store_test

import (
	"context"
	"database/sql"
	"sync"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/store"
)

func TestOptOuts(t *testing.T) {
	eachTwoAccounts(t, func(t *testing.T, ctx context.Context, st *store.Store, acc, other domain.Account) {
		add := func(a domain.Account, env domain.Environment, phone string, ch domain.Channel, when time.Duration) bool {
			t.Helper()
			added, err := st.AddOptOut(ctx, domain.OptOut{AccountID: a.ID, Env: env, Phone: phone, Channel: ch,
				Source: domain.OptOutReply, CreatedAt: at(when)})
			if err != nil {
				t.Fatal(err)
			}
			return added
		}
		phones := []string{"5511999990001", "5511999990002", "5511999990003", "5511999990004"}
		for i, p := range phones[:3] {
			if !add(acc, domain.Test, p, domain.SMS, time.Duration(i)*time.Minute) {
				t.Fatalf("%s not added", p)
			}
		}
		if add(acc, domain.Test, phones[0], domain.WhatsApp, time.Hour) {
			t.Error("a second stop word added the number again")
		}
		add(acc, domain.Live, phones[3], domain.RCS, 0)
		add(other, domain.Test, phones[3], domain.SMS, 0)

		// The send's lookup, in a transaction and outside one.
		var inTx map[string]bool
		write(t, st, func(ctx context.Context, tx *store.Tx) error {
			var err error
			inTx, err = tx.OptedOut(ctx, acc.ID, domain.Test, phones)
			return err
		})
		read, err := st.OptedOut(ctx, acc.ID, domain.Test, phones)
		if err != nil {
			t.Fatal(err)
		}
		for _, got := range []map[string]bool{inTx, read} {
			if len(got) != 3 || !got[phones[0]] || !got[phones[2]] || got[phones[3]] {
				t.Errorf("opted out among %v: %v (the live and the other account's opt-outs must not count)", phones, got)
			}
		}

		// Pages in write order; the first record of a number stays.
		first, err := st.OptOuts(ctx, acc.ID, domain.Test, 0, 2)
		if err != nil || len(first) != 2 || first[0].Phone != phones[0] || first[1].Phone != phones[1] {
			t.Fatalf("first page: %+v %v", first, err)
		}
		if first[0].Channel != domain.SMS || !first[0].CreatedAt.Equal(at(0)) || first[0].Source != domain.OptOutReply {
			t.Errorf("first opt-out: %+v", first[0])
		}
		// A cursor stays valid when rows before and at it go.
		if removed, err := st.RemoveOptOut(ctx, acc.ID, domain.Test, phones[1]); err != nil || !removed {
			t.Fatalf("remove: %v %v", removed, err)
		}
		if removed, _ := st.RemoveOptOut(ctx, acc.ID, domain.Test, phones[1]); removed {
			t.Error("removed twice")
		}
		add(acc, domain.Test, phones[1], domain.SMS, 2*time.Hour) // back at the end of the list
		rest, err := st.OptOuts(ctx, acc.ID, domain.Test, first[1].Seq, 10)
		if err != nil || len(rest) != 2 || rest[0].Phone != phones[2] || rest[1].Phone != phones[1] {
			t.Fatalf("next page: %+v %v", rest, err)
		}
		if live, _ := st.OptOuts(ctx, acc.ID, domain.Live, 0, 10); len(live) != 1 || live[0].Phone != phones[3] {
			t.Errorf("live list: %+v", live)
		}
	})
}

// On PostgreSQL the opt-out check of a send and the recording of a stop
// word are ordered by the account's opt-out lock: whichever comes second
// waits for the first to commit, so a send never commits after an opt-out
// it did not see. (SQLite has one writer: its transactions never overlap.)
func TestOptOutAndSendAreOrdered(t *testing.T) {
	eachPostgresAccount(t, "SQLite runs one write transaction at a time", func(t *testing.T, ctx context.Context, st *store.Store, acc domain.Account, admin *sql.DB) {
		stop := domain.OptOut{AccountID: acc.ID, Env: domain.Live, Phone: "5511999990001", Channel: domain.SMS, Source: domain.OptOutReply, CreatedAt: t0}

		t.Run("stop word first", func(t *testing.T) { stopWordFirst(t, st, admin, stop) })
		if _, err := st.RemoveOptOut(ctx, acc.ID, domain.Live, stop.Phone); err != nil {
			t.Fatal(err)
		}

		t.Run("send first", func(t *testing.T) { sendFirst(t, st, admin, stop) })
	})
}

// holdOpen is how one side keeps its transaction open while the other
// starts: it closes held once it is in, then waits on release; open
// releases it, and may be called again (deferred, for a failed check).
func holdOpen() (held, release chan struct{}, open func()) {
	held, release = make(chan struct{}), make(chan struct{})
	var once sync.Once
	return held, release, func() { once.Do(func() { close(release) }) }
}

// stopWordFirst: a send that looks while a stop word is being recorded
// waits for it, and sees it.
func stopWordFirst(t *testing.T, st *store.Store, admin *sql.DB, stop domain.OptOut) {
	ctx := context.Background()
	held, release, open := holdOpen()
	defer open() // a failed check must not leave the transaction hanging
	stopDone := make(chan error, 1)
	go func() {
		stopDone <- st.Write(ctx, func(tx *store.Tx) error {
			if _, err := tx.AddOptOut(ctx, stop); err != nil {
				return err
			}
			close(held)
			<-release
			return nil
		})
	}()
	select {
	case <-held:
	case err := <-stopDone:
		t.Fatalf("recording the stop word: %v", err)
	}
	sendDone := make(chan map[string]bool, 1)
	go func() {
		var out map[string]bool
		err := st.Write(ctx, func(tx *store.Tx) error {
			var err error
			out, err = tx.OptedOut(ctx, stop.AccountID, domain.Live, []string{stop.Phone})
			return err
		})
		if err != nil {
			t.Error(err)
		}
		sendDone <- out
	}()
	waitForLockWait(t, admin, true)
	open()
	if err := <-stopDone; err != nil {
		t.Fatal(err)
	}
	if out := <-sendDone; !out[stop.Phone] {
		t.Error("the send waited for the stop word's commit but did not see it")
	}
}

// sendFirst: a stop word recorded while a send is open waits for the send
// to commit; the send, which saw no opt-out, commits first.
func sendFirst(t *testing.T, st *store.Store, admin *sql.DB, stop domain.OptOut) {
	ctx := context.Background()
	held, release, open := holdOpen()
	defer open() // a failed check must not leave the transaction hanging
	sendDone := make(chan map[string]bool, 1)
	go func() {
		var out map[string]bool
		err := st.Write(ctx, func(tx *store.Tx) error {
			var err error
			if out, err = tx.OptedOut(ctx, stop.AccountID, domain.Live, []string{stop.Phone}); err != nil {
				return err
			}
			close(held)
			<-release
			return nil
		})
		if err != nil {
			t.Error(err)
		}
		sendDone <- out
	}()
	select {
	case <-held:
	case out := <-sendDone:
		t.Fatalf("the send's lookup failed (%v)", out)
	}
	stopDone := make(chan error, 1)
	go func() {
		stopDone <- st.Write(ctx, func(tx *store.Tx) error {
			_, err := tx.AddOptOut(ctx, stop)
			return err
		})
	}()
	// The stop word waits for the send's commit: the send, which
	// saw no opt-out, commits before the opt-out exists.
	waitForLockWait(t, admin, false)
	select {
	case err := <-stopDone:
		t.Fatalf("the stop word committed while the send was open (%v)", err)
	default:
	}
	open()
	if out := <-sendDone; out[stop.Phone] {
		t.Error("the send saw an opt-out recorded after it")
	}
	if err := <-stopDone; err != nil {
		t.Fatal(err)
	}
}

// waitForLockWait polls until a backend waits for the opt-out lock of an
// account in the given mode (shared: a send; exclusive: a stop word), or
// fails the test at the deadline.
func waitForLockWait(t *testing.T, admin *sql.DB, shared bool) {
	t.Helper()
	call := "pg_advisory_xact_lock($1)"
	if shared {
		call = "pg_advisory_xact_lock_shared($1)"
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		err := admin.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'
			AND datname = current_database() AND query = 'SELECT ' || $1`, call).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			rows, _ := admin.Query(`SELECT coalesce(wait_event_type,''), coalesce(wait_event,''), state, query FROM pg_stat_activity WHERE datname = current_database()`)
			for rows != nil && rows.Next() {
				var a, b, c, d string
				_ = rows.Scan(&a, &b, &c, &d)
				t.Logf("%s %s %s %q", a, b, c, d)
			}
			t.Fatalf("no %s waits for a lock: the two transactions are not ordered", call)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
