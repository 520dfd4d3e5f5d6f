package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/store"
	"github.com/msgsvc/msgsvc/internal/store/storetest"
)

// feedEvent is an event of the feed: without a URL (its send had no
// callbackUrl) unless one is given.
func feedEvent(acc domain.Account, env domain.Environment, id, url string, created time.Time) domain.Event {
	return domain.Event{ID: id, AccountID: acc.ID, Env: env, CampaignID: "cmp_1", MessageID: "msg_1", Event: "delivery_status",
		URL: url, Body: `{"n":"` + id + `"}`, NextAttemptAt: created, CreatedAt: created}
}

func feedIDs(t *testing.T, st *store.Store, acc domain.Account, env domain.Environment, after int64) ([]string, int64) {
	t.Helper()
	evs, err := st.Feed(context.Background(), acc.ID, env, after, 100)
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{}
	last := after
	for _, e := range evs {
		if e.Pos <= last {
			t.Fatalf("feed positions do not grow: %d after %d", e.Pos, last)
		}
		ids, last = append(ids, e.ID), e.Pos
	}
	return ids, last
}

// The feed lists one account's environment in write order (whatever the
// ids), with and without callbacks, and a position read back returns only
// what was written after it.
func TestFeedOrderAndScope(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store, _ string) {
		acc, other := newAccount(t, st, 0), newAccount(t, st, 0)
		// Ids sort against the write order.
		batch1 := []domain.Event{
			feedEvent(acc, domain.Live, "evt_9", "", t0),
			feedEvent(acc, domain.Test, "evt_8", "", t0),
			feedEvent(other, domain.Live, "evt_7", "", t0),
			feedEvent(acc, domain.Live, "evt_6", "https://hooks.example.com/cb", t0),
		}
		write(t, st, func(ctx context.Context, tx *store.Tx) error { return tx.InsertEvents(ctx, batch1) })
		write(t, st, func(ctx context.Context, tx *store.Tx) error {
			return tx.InsertEvents(ctx, []domain.Event{feedEvent(acc, domain.Live, "evt_5", "", t0)})
		})
		got, pos := feedIDs(t, st, acc, domain.Live, 0)
		if fmt.Sprint(got) != "[evt_9 evt_6 evt_5]" {
			t.Fatalf("live feed %v, want [evt_9 evt_6 evt_5]", got)
		}
		if test, _ := feedIDs(t, st, acc, domain.Test, 0); fmt.Sprint(test) != "[evt_8]" {
			t.Errorf("test feed %v, want [evt_8]", test)
		}
		if none, p := feedIDs(t, st, acc, domain.Live, pos); len(none) != 0 || p != pos {
			t.Errorf("after the last position: %v (position %d, want %d)", none, p, pos)
		}
		write(t, st, func(ctx context.Context, tx *store.Tx) error {
			return tx.InsertEvents(ctx, []domain.Event{feedEvent(acc, domain.Live, "evt_1", "", t0)})
		})
		if newer, _ := feedIDs(t, st, acc, domain.Live, pos); fmt.Sprint(newer) != "[evt_1]" {
			t.Errorf("after the last position, once more was written: %v, want [evt_1]", newer)
		}
		// Without a callback an event is for the feed alone: never claimed
		// for delivery, never redelivered.
		claimed, err := st.ClaimEvents(context.Background(), "node", t0.Add(time.Hour), time.Minute, 100)
		if err != nil || len(claimed) != 1 || claimed[0].ID != "evt_6" {
			t.Errorf("claimed %v (%v), want only evt_6, the one with a callback", claimed, err)
		}
		if err := st.Redeliver(context.Background(), acc.ID, "evt_9", t0); err != domain.ErrNotFound {
			t.Errorf("redeliver an event without a callback: %v, want ErrNotFound", err)
		}
	})
}

// On PostgreSQL transactions commit in parallel: an event inserted before
// another (a lower seq) may become visible after a reader has read past the
// other. The feed must still return it.
func TestFeedKeepsAnEventThatCommitsLate(t *testing.T) {
	eachPostgresAccount(t, "SQLite has one writer: transactions commit one after another", func(t *testing.T, ctx context.Context, st *store.Store, acc domain.Account, raw *sql.DB) {
		late, err := raw.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer late.Rollback() //nolint:errcheck
		// Inserted first (lower seq), committed last.
		if _, err := late.ExecContext(ctx, `INSERT INTO webhook_events (id, account_id, env, campaign_id, message_id, event,
			url, body, state, created_at) VALUES ('evt_late', $1, 'live', 'cmp_1', 'msg_1', 'delivery_status', '', '{}',
			'none', $2)`, acc.ID, t0.UnixMilli()); err != nil {
			t.Fatal(err)
		}
		write(t, st, func(ctx context.Context, tx *store.Tx) error {
			return tx.InsertEvents(ctx, []domain.Event{feedEvent(acc, domain.Live, "evt_early", "", t0)})
		})
		got, pos := feedIDs(t, st, acc, domain.Live, 0)
		if fmt.Sprint(got) != "[evt_early]" {
			t.Fatalf("feed %v, want [evt_early]", got)
		}
		if err := late.Commit(); err != nil {
			t.Fatal(err)
		}
		if got, _ := feedIDs(t, st, acc, domain.Live, pos); fmt.Sprint(got) != "[evt_late]" {
			t.Fatalf("after the cursor, once the late transaction committed: %v, want [evt_late]", got)
		}
	})
}

// Old events are deleted once delivered, given up or written for the feed
// alone; pending ones wait for their retries, and the newest stays.
func TestDeleteOldEvents(t *testing.T) {
	eachAccount(t, 0, func(t *testing.T, ctx context.Context, st *store.Store, acc domain.Account) {
		old := t0.Add(-31 * 24 * time.Hour)
		// Real ids: old events are found by the creation time their id
		// starts with.
		oldFeed, oldPending, fresh := id.New(id.Event, old), id.New(id.Event, old), id.New(id.Event, t0)
		name := map[string]string{oldFeed: "old_feed", oldPending: "old_pending", fresh: "new"}
		left := func() string {
			got, _ := feedIDs(t, st, acc, domain.Live, 0)
			var out []string
			for _, g := range got {
				out = append(out, name[g])
			}
			return fmt.Sprint(out)
		}
		evs := []domain.Event{
			feedEvent(acc, domain.Live, oldFeed, "", old),
			feedEvent(acc, domain.Live, oldPending, "https://hooks.example.com/cb", old),
			feedEvent(acc, domain.Live, fresh, "", t0),
		}
		write(t, st, func(ctx context.Context, tx *store.Tx) error { return tx.InsertEvents(ctx, evs) })
		if err := st.RecordAttempts(ctx, "", []domain.AttemptOutcome{{Attempt: newAttempt(oldPending, old, 500, "x"),
			State: domain.EventPending, NextAttemptAt: t0.Add(time.Hour)}}); err != nil {
			t.Fatal(err)
		}
		n, err := st.DeleteEventsBefore(ctx, t0.Add(-30*24*time.Hour), 500)
		if err != nil || n != 1 {
			t.Fatalf("deleted %d (%v), want 1", n, err)
		}
		if got := left(); got != "[old_pending new]" {
			t.Errorf("left %v, want [old_pending new]", got)
		}
		// The newest event stays whatever its age.
		n, err = st.DeleteEventsBefore(ctx, t0.Add(time.Hour), 500)
		if err != nil {
			t.Fatal(err)
		}
		got := left()
		if st.Dialect() == store.SQLite && got != "[old_pending new]" {
			t.Errorf("SQLite: left %v (%d deleted), want the newest kept", got, n)
		}
		if st.Dialect() == store.Postgres && got != "[old_pending]" {
			t.Errorf("PostgreSQL: left %v (%d deleted), want [old_pending]", got, n)
		}
		// An event created in the very millisecond of the cutoff is not
		// older than it.
		edge := id.New(id.Event, t0.Add(2*time.Hour))
		write(t, st, func(ctx context.Context, tx *store.Tx) error {
			return tx.InsertEvents(ctx, []domain.Event{feedEvent(acc, domain.Live, edge, "", t0.Add(2*time.Hour)),
				feedEvent(acc, domain.Live, id.New(id.Event, t0.Add(3*time.Hour)), "", t0.Add(3*time.Hour))})
		})
		name[edge] = "edge"
		if _, err := st.DeleteEventsBefore(ctx, t0.Add(2*time.Hour), 500); err != nil {
			t.Fatal(err)
		}
		if got := left(); !strings.Contains(got, "edge") {
			t.Errorf("left %v: the event of the cutoff's millisecond was deleted", got)
		}
	})
}

// The message list: newest first in write order, filtered, paged by the
// last message's id.
func TestSearchMessagesByReference(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store, _ string) {
		acc := newAccount(t, st, 0)
		c := newCampaign(acc, domain.Live, t0, 3)
		a, b, d := newMessage(c, "5511999990001", 0, t0), newMessage(c, "5511999990002", 0, t0), newMessage(c, "5511999990003", 0, t0)
		a.ID, b.ID, d.ID = "msg_3", "msg_2", "msg_1"
		a.Reference, b.Reference, d.Reference = "order-1", "order-2", "order-1"
		insertMessages(t, st, c, a, b, d)
		list := func(f domain.MessageFilter) string {
			f.AccountID, f.Env = acc.ID, domain.Live
			got, err := st.SearchMessages(context.Background(), f)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, m := range got {
				ids = append(ids, m.ID)
			}
			return fmt.Sprint(ids)
		}
		if got := list(domain.MessageFilter{Reference: "order-1"}); got != "[msg_1 msg_3]" {
			t.Errorf("by reference %s, want [msg_1 msg_3]", got)
		}
		if got := list(domain.MessageFilter{Limit: 1001}); got != "[msg_1 msg_2 msg_3]" {
			t.Errorf("newest first %s, want [msg_1 msg_2 msg_3]", got)
		}
		if got := list(domain.MessageFilter{Before: "msg_2"}); got != "[msg_3]" {
			t.Errorf("after the cursor msg_2: %s, want [msg_3]", got)
		}
	})
}

// A backup taken while the store is open holds everything, in the same
// write order (the feed's positions survive).
func TestBackup(t *testing.T) {
	eachStore(t, func(t *testing.T, ctx context.Context, st *store.Store) {
		path := filepath.Join(t.TempDir(), "copy.db")
		if st.Dialect() == store.Postgres {
			if err := st.Backup(ctx, path); err != store.ErrBackupPostgres {
				t.Errorf("PostgreSQL backup: %v, want ErrBackupPostgres", err)
			}
			return
		}
		acc := newAccount(t, st, 0)
		evs := []domain.Event{feedEvent(acc, domain.Live, id.New(id.Event, t0), "", t0),
			feedEvent(acc, domain.Live, id.New(id.Event, t0), "", t0)}
		write(t, st, func(ctx context.Context, tx *store.Tx) error { return tx.InsertEvents(ctx, evs) })
		// A gap in the rowids, which a copy must not close.
		n, err := st.DeleteEventsBefore(ctx, t0.Add(time.Hour), 1)
		if err != nil || n != 1 {
			t.Fatalf("delete one: %d %v", n, err)
		}
		write(t, st, func(ctx context.Context, tx *store.Tx) error {
			return tx.InsertEvents(ctx, []domain.Event{feedEvent(acc, domain.Live, id.New(id.Event, t0), "", t0)})
		})
		if err := st.Backup(ctx, path); err != nil {
			t.Fatal(err)
		}
		if err := st.Backup(ctx, path); err == nil {
			t.Error("a second backup overwrote the first")
		}
		copied := storetest.Open(t, path)
		orig, err := st.Feed(ctx, acc.ID, domain.Live, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		got, err := copied.Feed(ctx, acc.ID, domain.Live, 0, 10)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(orig) || len(got) != 2 {
			t.Errorf("the copy's feed %v (%v), want %v", got, err, orig)
		}
	})
}

// The Twilio-compatible API's callbacks are delivered like any webhook
// but are not in the native feed: their bodies are Twilio's form
// parameters, not the feed's JSON.
func TestFeedLeavesOutTwilioCallbacks(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store, _ string) {
		acc := newAccount(t, st, 0)
		status := feedEvent(acc, domain.Live, "evt_2", "https://hooks.example.com/status", t0)
		status.Event, status.Body = domain.EventTwilioStatus, "MessageStatus=sent"
		inbound := feedEvent(acc, domain.Live, "evt_3", "https://hooks.example.com/sms", t0)
		inbound.Event, inbound.MessageID, inbound.Body = domain.EventTwilioInbound, "", "Body=hi"
		write(t, st, func(ctx context.Context, tx *store.Tx) error {
			return tx.InsertEvents(ctx, []domain.Event{feedEvent(acc, domain.Live, "evt_1", "", t0), status, inbound})
		})
		if got, _ := feedIDs(t, st, acc, domain.Live, 0); fmt.Sprint(got) != "[evt_1]" {
			t.Fatalf("feed %v, want [evt_1] without the Twilio callbacks", got)
		}
		claimed, err := st.ClaimEvents(context.Background(), "node", t0.Add(time.Hour), time.Minute, 100)
		if err != nil || len(claimed) != 2 {
			t.Fatalf("claimed %v (%v), want both Twilio callbacks", claimed, err)
		}
	})
}
