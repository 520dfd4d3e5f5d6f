package intake

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// The group commit against SendTx in memory: the rules of a commit
// (replays, the daily limit, the balance, a stale cache) need no database.

// memoryService commits through a fakeWriter whose one account has
// balance.
func memoryService(balance int64) (*Service, *fakeWriter, domain.Account) {
	acc := memoryAccount(balance)
	tx := newFakeTx()
	tx.balances[acc.ID] = balance
	w := &fakeWriter{tx: tx}
	return &Service{writer: w}, w, acc
}

func memoryAccount(balance int64) domain.Account {
	return domain.Account{ID: "acc_mem", Name: "Mem", Currency: "EUR", CountryCode: "34", Balance: balance}
}

// checkForgotten fails unless the idempotency key of a refused send was
// forgotten: a retry once the refusal no longer holds must not replay it.
func checkForgotten(t *testing.T, w *fakeWriter, key string) {
	t.Helper()
	if _, kept := w.tx.keys[[2]string{"key_test", key}]; kept {
		t.Fatalf("the refused send's key %s was kept", key)
	}
}

func TestMemoryCommitReplaysAKey(t *testing.T) {
	ctx := context.Background()
	svc, w, acc := memoryService(10 * credit)

	first := withIdem(newSend(acc, "live", at(time.Second), credit, 1), "k1", "h1")
	res, err := svc.commitSends(ctx, []pendingSend{first})
	if err != nil || res[0] != (sendResult{}) {
		t.Fatalf("first use of the key: %+v, %v", res, err)
	}
	again := withIdem(newSend(acc, "live", at(2*time.Second), credit, 1), "k1", "h1")
	other := withIdem(newSend(acc, "live", at(3*time.Second), credit, 1), "k1", "h2")
	res, err = svc.commitSends(ctx, []pendingSend{again, other})
	if err != nil {
		t.Fatal(err)
	}
	if r := res[0].replay; r == nil || string(r.Response) != string(first.idem.Response) || res[0].err != nil {
		t.Fatalf("same key and request: %+v, want the first answer replayed", res[0])
	}
	if !errors.Is(res[1].err, ErrIdempotencyConflict) {
		t.Fatalf("same key, other request: %v, want a conflict", res[1].err)
	}
	if got := w.tx.balances[acc.ID]; got != 9*credit || len(w.tx.messages) != 1 || len(w.tx.ledger) != 1 {
		t.Fatalf("balance %d, %d messages, %d ledger lines: want one send charged once", got, len(w.tx.messages), len(w.tx.ledger))
	}
}

func TestMemoryCommitRefusesOverTheDailyLimit(t *testing.T) {
	ctx := context.Background()
	svc, w, acc := memoryService(10 * credit)
	opening := func(s pendingSend, phones ...string) pendingSend {
		s.conversations = &domain.Conversations{AccountID: acc.ID, Env: "live", Phones: phones, At: s.campaign.CreatedAt,
			Day: s.campaign.CreatedAt, Limit: 2}
		return s
	}
	fits := opening(newSend(acc, "live", at(time.Second), credit, 1), "34600000001")
	over := withIdem(opening(newSend(acc, "live", at(2*time.Second), credit, 2), "34600000002", "34600000003"), "k-over", "h")
	res, err := svc.commitSends(ctx, []pendingSend{fits, over})
	if err != nil {
		t.Fatal(err)
	}
	if res[0] != (sendResult{}) {
		t.Fatalf("a send within the limit: %+v", res[0])
	}
	var d *domain.DailyLimitError
	if !errors.As(res[1].err, &d) || d.Limit != 2 || d.Used != 1 || d.Asked != 2 {
		t.Fatalf("a send over the limit: %v, want a daily limit error (1 of 2 used, 2 asked)", res[1].err)
	}
	if len(w.tx.messages) != 1 || w.tx.balances[acc.ID] != 9*credit || len(w.tx.opened) != 1 {
		t.Fatalf("%d messages, balance %d, %d conversations opened: the refused send wrote something",
			len(w.tx.messages), w.tx.balances[acc.ID], len(w.tx.opened))
	}
	checkForgotten(t, w, "k-over")
}

func TestMemoryCommitRefusesWhatTheBalanceDoesNotCover(t *testing.T) {
	ctx := context.Background()
	svc, w, acc := memoryService(3 * credit)
	cheap := newSend(acc, "live", at(time.Second), credit, 2)
	dear := withIdem(newSend(acc, "live", at(2*time.Second), 2*credit, 1), "k-dear", "h")
	alsoCheap := newSend(acc, "live", at(3*time.Second), credit, 1)
	// A conversation-opening send is committed on its own, before the
	// others, and refused the same way.
	opening := newSend(acc, "live", at(4*time.Second), 5*credit, 1)
	opening.conversations = &domain.Conversations{AccountID: acc.ID, Env: "live", Phones: []string{"34600000000"},
		At: opening.campaign.CreatedAt, Day: opening.campaign.CreatedAt}
	res, err := svc.commitSends(ctx, []pendingSend{cheap, dear, alsoCheap, opening})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(res[3].err, ErrInsufficientCredits) {
		t.Fatalf("a conversation-opening send over the balance: %v", res[3].err)
	}
	if w.tx.conversations[conversationDay(opening.conversations)] != 0 {
		t.Fatal("the refused send kept its conversations")
	}
	var refused int
	for i, r := range res[:3] {
		if errors.Is(r.err, ErrInsufficientCredits) {
			refused++
		} else if r != (sendResult{}) {
			t.Fatalf("send %d: %+v", i, r)
		}
	}
	if refused != 1 || !errors.Is(res[1].err, ErrInsufficientCredits) {
		t.Fatalf("results %+v: want only the dear send refused", res)
	}
	if w.tx.balances[acc.ID] != 0 || len(w.tx.messages) != 3 {
		t.Fatalf("balance %d, %d messages: want the two cheap sends charged and written", w.tx.balances[acc.ID], len(w.tx.messages))
	}
	checkForgotten(t, w, "k-dear")
}

func TestMemoryCommitRefusesAStaleCache(t *testing.T) {
	ctx := context.Background()
	svc, w, acc := memoryService(10 * credit)
	w.tx.authVersion = 7
	stale, current := newSend(acc, "live", at(time.Second), credit, 1), newSend(acc, "live", at(2*time.Second), credit, 1)
	stale.authVersion, current.authVersion = 6, 7
	res, err := svc.commitSends(ctx, []pendingSend{stale, current})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(res[0].err, ErrStaleAuth) || res[1] != (sendResult{}) {
		t.Fatalf("results %+v: want the stale send refused and the current one written", res)
	}
	if len(w.tx.messages) != 1 || w.tx.messages[0].ID != current.messages[0].ID {
		t.Fatalf("messages written: %+v", w.tx.messages)
	}
}
