package store_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"msgsvc/internal/store"
	"msgsvc/internal/store/storetest"
)

// sendCase is one send of a CommitSends batch and how it must end.
type sendCase struct {
	name       string
	send       store.Send
	wantErr    error
	wantReplay *store.Idempotency // the remembered response a replay returns
}

func TestCommitSends(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store, _ string) {
		ctx := context.Background()
		acc := newAccount(t, st, 10*credit)

		normal := newSend(acc, "live", at(time.Second), credit, 3)
		normal.Messages[1].Charged, normal.Messages[1].Credits = 2*credit, 2*credit
		normal.Messages[2].Content = `{"media":["https://cdn.example.com/a.png"]}`
		normal.Messages[2].ScheduledAt = at(time.Hour)
		normal.Messages[2].NextAttemptAt = at(time.Hour)
		tooDear := newSend(acc, "live", at(2*time.Second), 5*credit, 2)
		idem := withIdem(newSend(acc, "live", at(3*time.Second), credit, 1), "k1", "h1")
		refusedIdem := withIdem(newSend(acc, "live", at(4*time.Second), 100*credit, 1), "k2", "h2")
		free := newSend(acc, "test", at(5*time.Second), 0, 2)
		sameBatchDup := withIdem(newSend(acc, "live", at(6*time.Second), credit, 1), "k1", "h1")

		batches := []struct {
			name   string
			before func() // runs before the batch
			cases  []sendCase
		}{
			{"mixed batch", nil, []sendCase{
				{"normal send of 3 messages", normal, nil, nil},
				{"charge over the balance", tooDear, store.ErrInsufficientCredits, nil},
				{"first use of an idempotency key", idem, nil, nil},
				{"refused send with a key", refusedIdem, store.ErrInsufficientCredits, nil},
				{"free test send", free, nil, nil},
				{"same key twice in one batch", sameBatchDup, nil, idem.Idem},
			}},
			{"reuse of keys", func() {
				if _, err := st.AddCredits(ctx, acc.ID, 100*credit, store.LedgerTopUp, "top up"); err != nil {
					t.Fatal(err)
				}
			}, []sendCase{
				{"same key and hash", withIdem(newSend(acc, "live", at(7*time.Second), credit, 1), "k1", "h1"), nil, idem.Idem},
				{"same key, other hash", withIdem(newSend(acc, "live", at(8*time.Second), credit, 1), "k1", "h9"),
					store.ErrIdempotencyConflict, nil},
				// The refused key was forgotten, so a retry after a top-up goes through.
				{"retry of the refused key", withIdem(newSend(acc, "live", at(9*time.Second), 100*credit, 1), "k2", "h2"), nil, nil},
			}},
		}

		balance := 10 * credit
		debits := map[string]store.LedgerEntry{}
		for _, b := range batches {
			if b.before != nil {
				b.before()
				balance += 100 * credit
			}
			sends := make([]store.Send, len(b.cases))
			for i, c := range b.cases {
				sends[i] = c.send
			}
			res, err := st.CommitSends(ctx, sends)
			if err != nil {
				t.Fatalf("%s: %v", b.name, err)
			}
			if len(res) != len(sends) {
				t.Fatalf("%s: %d results for %d sends", b.name, len(res), len(sends))
			}
			for i, c := range b.cases {
				wantErr(t, c.name, res[i].Err, c.wantErr)
				if !reflect.DeepEqual(res[i].Replay, c.wantReplay) {
					t.Errorf("%s: replay %+v, want %+v", c.name, res[i].Replay, c.wantReplay)
				}
				written := c.wantErr == nil && c.wantReplay == nil
				checkSendWritten(t, st, c.name, c.send, written)
				if !written {
					continue
				}
				// One debit line per charged message, each with the balance
				// it left, in message order.
				for _, m := range c.send.Messages {
					if m.Charged == 0 {
						continue
					}
					balance -= m.Charged
					debits[m.ID] = store.LedgerEntry{AccountID: acc.ID, Amount: -m.Charged, BalanceAfter: balance,
						Kind: store.LedgerDebit, MessageID: m.ID, CampaignID: c.send.Campaign.ID, CreatedAt: c.send.Campaign.CreatedAt}
				}
			}
			checkBalance(t, st, acc.ID, balance)
		}

		for _, k := range []string{"k1", "k2"} {
			got, err := st.Idempotency(ctx, "key_test", k)
			if err != nil {
				t.Fatalf("idempotency %s: %v", k, err)
			}
			if got.RequestHash != "h"+k[1:] || got.StatusCode != 202 {
				t.Errorf("idempotency %s = %+v", k, got)
			}
		}
		if len(debits) != 5 {
			t.Fatalf("test table accepts %d charged messages, want 5", len(debits))
		}
		checkDebits(t, st, acc.ID, debits)
	})
}

// checkSendWritten asserts that a send's campaign and messages were written
// exactly as given, or not at all.
func checkSendWritten(t *testing.T, st *store.Store, name string, snd store.Send, written bool) {
	t.Helper()
	ctx := context.Background()
	c, err := st.Campaign(ctx, snd.Campaign.AccountID, snd.Campaign.ID)
	if !written {
		wantErr(t, name+": campaign", err, store.ErrNotFound)
		for _, m := range snd.Messages {
			_, err := st.MessageByID(ctx, m.ID)
			wantErr(t, name+": message", err, store.ErrNotFound)
		}
		return
	}
	if err != nil || !reflect.DeepEqual(c, snd.Campaign) {
		t.Errorf("%s: campaign %+v (%v), want %+v", name, c, err, snd.Campaign)
	}
	for _, want := range snd.Messages {
		got, err := st.Message(ctx, snd.Campaign.AccountID, want.ID)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: message\n got %+v (%v)\nwant %+v", name, got, err, want)
		}
	}
}

// checkDebits asserts that the account's debit lines are exactly want,
// keyed by message id (ledger ids are not compared: they are random).
func checkDebits(t *testing.T, st *store.Store, accountID string, want map[string]store.LedgerEntry) {
	t.Helper()
	lines, err := st.Ledger(context.Background(), accountID, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]store.LedgerEntry{}
	for _, e := range lines {
		if e.Kind != store.LedgerDebit {
			continue
		}
		if _, dup := got[e.MessageID]; dup {
			t.Errorf("two debit lines for message %s", e.MessageID)
		}
		e.ID = ""
		got[e.MessageID] = e
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("debit lines\n got %+v\nwant %+v", got, want)
	}
}

func TestIdempotencyRecords(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store, _ string) {
		ctx := context.Background()
		saves := []store.Idempotency{
			{KeyID: "key_a", Key: "k", RequestHash: "first", StatusCode: 200, Response: []byte(`{"n":1}`), CreatedAt: at(0)},
			{KeyID: "key_a", Key: "k", RequestHash: "second", StatusCode: 201, Response: []byte(`{"n":2}`), CreatedAt: at(time.Minute)},
			{KeyID: "key_b", Key: "k", RequestHash: "other key", StatusCode: 200, Response: []byte(`{}`), CreatedAt: at(2 * time.Hour)},
			{KeyID: "key_a", Key: "old", RequestHash: "h", StatusCode: 200, Response: []byte(`[]`), CreatedAt: at(-time.Hour)},
		}
		for _, s := range saves {
			if err := st.SaveIdempotency(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
		reads := []struct {
			name, keyID, key string
			want             store.Idempotency
			wantErr          error
		}{
			{"first writer wins", "key_a", "k", saves[0], nil},
			{"keys are per API key", "key_b", "k", saves[2], nil},
			{"unknown", "key_a", "nope", store.Idempotency{}, store.ErrNotFound},
		}
		for _, tc := range reads {
			got, err := st.Idempotency(ctx, tc.keyID, tc.key)
			wantErr(t, tc.name, err, tc.wantErr)
			if err == nil && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
			}
		}

		deletes := []struct {
			before time.Time
			want   int64
			left   []string // keys of key_a still readable
		}{
			{at(-2 * time.Hour), 0, []string{"k", "old"}},
			{at(0), 1, []string{"k"}},
			{at(time.Hour), 1, nil},
			{at(time.Hour), 0, nil},
		}
		for _, tc := range deletes {
			n, err := st.DeleteIdempotencyBefore(ctx, tc.before)
			if err != nil || n != tc.want {
				t.Errorf("delete before %v: %d (%v), want %d", tc.before, n, err, tc.want)
			}
			for _, k := range []string{"k", "old"} {
				_, err := st.Idempotency(ctx, "key_a", k)
				found := err == nil
				want := false
				for _, l := range tc.left {
					want = want || l == k
				}
				if found != want {
					t.Errorf("after delete before %v: key %q found=%v, want %v", tc.before, k, found, want)
				}
			}
		}
		if _, err := st.Idempotency(ctx, "key_b", "k"); err != nil {
			t.Errorf("newer record deleted: %v", err)
		}
	})
}
