package intake

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/ledger"
)

// Charging a sub-account's send at every level of its chain, in memory.

// smsPrice is a price table charging micro per SMS segment at home (the
// accounts of these tests are all at home in 34).
func smsPrice(micro int64) string {
	return `{"home":{"smsSegment":` + strconv.FormatInt(micro, 10) + `}}`
}

// treeAccounts are a top-level reseller, a reseller under it and a
// customer under that, paying 1, 1.5 and 2 credits a segment (each price
// set by the account above).
func treeAccounts() [3]domain.Account {
	return [3]domain.Account{
		{ID: "acc_top", Name: "Top", Currency: "EUR", CountryCode: "34", Reseller: true, Prices: smsPrice(credit)},
		{ID: "acc_mid", Name: "Mid", Currency: "EUR", CountryCode: "34", Reseller: true, ParentID: "acc_top",
			Prices: smsPrice(3 * credit / 2)},
		{ID: "acc_leaf", Name: "Leaf", Currency: "EUR", CountryCode: "34", ParentID: "acc_mid", Prices: smsPrice(2 * credit)},
	}
}

// memoryTree commits through a fakeWriter holding the three accounts of
// treeAccounts with the given balances.
func memoryTree(top, mid, leaf int64) (*Service, *fakeWriter, [3]domain.Account) {
	tx := newFakeTx()
	accs := treeAccounts()
	tx.accounts = map[string]domain.Account{}
	for i, b := range []int64{top, mid, leaf} {
		accs[i].Balance = b
		tx.accounts[accs[i].ID] = accs[i]
		tx.balances[accs[i].ID] = b
	}
	w := &fakeWriter{tx: tx}
	return &Service{writer: w}, w, accs
}

// childSend is a send of n one-segment SMS by acc at its own price, as
// the Service plans it (test keys pay nothing).
func childSend(acc domain.Account, env domain.Environment, created time.Time, n int) pendingSend {
	prices, _ := domain.ParsePrices(acc.Prices)
	s := newSend(acc, env, created, prices.SMS("34", "34", 1), n)
	s.parentID = acc.ParentID
	if !env.Live() {
		for i := range s.messages {
			s.messages[i].Charged = 0
		}
	}
	return s
}

// ledgerOf is the lines of one account.
func ledgerOf(tx *fakeTx, accountID string) []ledger.Entry {
	var out []ledger.Entry
	for _, e := range tx.ledger {
		if e.AccountID == accountID {
			out = append(out, e)
		}
	}
	return out
}

func TestMemoryChainChargesEveryLevel(t *testing.T) {
	ctx := context.Background()
	svc, w, accs := memoryTree(10*credit, 10*credit, 10*credit)
	snd := childSend(accs[2], "live", at(time.Second), 2)
	res, err := svc.commitSends(ctx, []pendingSend{snd})
	if err != nil || res[0] != (sendResult{}) {
		t.Fatalf("send: %+v, %v", res, err)
	}
	for i, want := range []int64{8 * credit, 7 * credit, 6 * credit} {
		if got := w.tx.balances[accs[i].ID]; got != want {
			t.Errorf("%s: balance %d, want %d", accs[i].ID, got, want)
		}
		lines := ledgerOf(w.tx, accs[i].ID)
		if len(lines) != 2 {
			t.Fatalf("%s: %d ledger lines, want one per message", accs[i].ID, len(lines))
		}
		for j, e := range lines {
			if e.MessageID != snd.messages[j].ID || e.CampaignID != snd.campaign.ID || e.Kind != ledger.Debit {
				t.Errorf("%s line %d: %+v, want a debit naming message %s", accs[i].ID, j, e, snd.messages[j].ID)
			}
		}
		if last := lines[1]; last.BalanceAfter != want {
			t.Errorf("%s: last line leaves %d, want %d", accs[i].ID, last.BalanceAfter, want)
		}
	}
	if len(w.tx.messages) != 2 {
		t.Fatalf("%d messages written", len(w.tx.messages))
	}
	up := w.tx.messages[0].Upline
	if len(up) != 2 || up[0] != (domain.Level{AccountID: "acc_mid", Charged: 3 * credit / 2}) ||
		up[1] != (domain.Level{AccountID: "acc_top", Charged: credit}) {
		t.Fatalf("upline %+v: want the parent's then the top's own price", up)
	}
}

func TestMemoryChainRefusesWhenAnyLevelIsShort(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name           string
		top, mid, leaf int64
	}{
		{"the sender", 10 * credit, 10 * credit, credit},
		{"its parent", 10 * credit, credit, 10 * credit},
		{"the top", credit / 2, 10 * credit, 10 * credit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc, w, accs := memoryTree(tc.top, tc.mid, tc.leaf)
			snd := withIdem(childSend(accs[2], "live", at(time.Second), 1), "k", "h")
			res, err := svc.commitSends(ctx, []pendingSend{snd})
			if err != nil {
				t.Fatal(err)
			}
			if !errors.Is(res[0].err, ErrInsufficientCredits) {
				t.Fatalf("result %+v, want insufficient credits", res[0])
			}
			for i, want := range []int64{tc.top, tc.mid, tc.leaf} {
				if got := w.tx.balances[accs[i].ID]; got != want {
					t.Errorf("%s: balance %d, want it untouched at %d", accs[i].ID, got, want)
				}
			}
			if len(w.tx.ledger) != 0 || len(w.tx.messages) != 0 {
				t.Fatalf("%d ledger lines, %d messages written for a refused send", len(w.tx.ledger), len(w.tx.messages))
			}
			checkForgotten(t, w, "k")
		})
	}
}

// A batch of a child's sends that its parent covers only in part: the
// sends the parent can no longer pay are refused, the rest charged at
// both levels.
func TestMemoryChainRefusesOnlyWhatTheParentCannotCover(t *testing.T) {
	ctx := context.Background()
	svc, w, accs := memoryTree(100*credit, 4*credit, 100*credit)
	var sends []pendingSend
	for i := 0; i < 4; i++ {
		sends = append(sends, childSend(accs[2], "live", at(time.Duration(i+1)*time.Second), 1))
	}
	res, err := svc.commitSends(ctx, sends)
	if err != nil {
		t.Fatal(err)
	}
	var ok int
	for _, r := range res {
		if r == (sendResult{}) {
			ok++
		} else if !errors.Is(r.err, ErrInsufficientCredits) {
			t.Fatalf("result %+v", r)
		}
	}
	if ok != 2 {
		t.Fatalf("%d sends accepted, want the 2 that 4 credits at 1.5 each cover", ok)
	}
	want := []int64{98 * credit, credit, 96 * credit}
	for i := range accs {
		if got := w.tx.balances[accs[i].ID]; got != want[i] {
			t.Errorf("%s: balance %d, want %d", accs[i].ID, got, want[i])
		}
		if n := len(ledgerOf(w.tx, accs[i].ID)); n != 2 {
			t.Errorf("%s: %d lines, want 2", accs[i].ID, n)
		}
	}
}

func TestMemoryTopLevelSendReadsNoChain(t *testing.T) {
	ctx := context.Background()
	svc, w, accs := memoryTree(10*credit, 10*credit, 10*credit)
	snd := newSend(accs[0], "live", at(time.Second), credit, 1)
	if res, err := svc.commitSends(ctx, []pendingSend{snd}); err != nil || res[0] != (sendResult{}) {
		t.Fatalf("send: %+v, %v", res, err)
	}
	if w.tx.ancestorReads != 0 || w.tx.messages[0].Upline != nil {
		t.Fatalf("%d chain reads, upline %+v: a top-level send has none", w.tx.ancestorReads, w.tx.messages[0].Upline)
	}
}

func TestMemoryChainTestKeysPayAtNoLevel(t *testing.T) {
	ctx := context.Background()
	svc, w, accs := memoryTree(0, 0, 0)
	snd := childSend(accs[2], "test", at(time.Second), 1)
	if res, err := svc.commitSends(ctx, []pendingSend{snd}); err != nil || res[0] != (sendResult{}) {
		t.Fatalf("send: %+v, %v", res, err)
	}
	if len(w.tx.ledger) != 0 || w.tx.messages[0].Upline != nil || w.tx.ancestorReads != 0 {
		t.Fatalf("ledger %+v, upline %+v, %d chain reads: a test key's message charges nobody", w.tx.ledger,
			w.tx.messages[0].Upline, w.tx.ancestorReads)
	}
}

// A WhatsApp send that opens a conversation is committed on its own
// (commitSend); it is charged up the chain the same way, at each level's
// conversation price, and refused with its conversations released when a
// level is short.
func TestMemoryChainConversationSend(t *testing.T) {
	ctx := context.Background()
	svc, w, accs := memoryTree(10*credit, credit, 10*credit)
	wa := func(at time.Time) pendingSend {
		s := childSend(accs[2], "live", at, 1)
		m := &s.messages[0]
		m.Type, m.Channel, m.Credits, m.Charged = domain.WhatsApp, domain.WhatsApp, 2*credit, 2*credit
		s.conversations = &domain.Conversations{AccountID: accs[2].ID, Env: "live", Phones: []string{m.To}, At: at, Day: at}
		return s
	}
	// The middle pays its default conversation price (2 credits), more
	// than it holds.
	res, err := svc.commitSends(ctx, []pendingSend{wa(at(time.Second))})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(res[0].err, ErrInsufficientCredits) || len(w.tx.ledger) != 0 || len(w.tx.opened) != 0 {
		t.Fatalf("result %+v, %d lines, %d conversations: want refused, nothing written", res[0], len(w.tx.ledger), len(w.tx.opened))
	}
	w.tx.balances[accs[1].ID] = 10 * credit
	if res, err = svc.commitSends(ctx, []pendingSend{wa(at(2 * time.Second))}); err != nil || res[0] != (sendResult{}) {
		t.Fatalf("send: %+v, %v", res, err)
	}
	want := []int64{8 * credit, 8 * credit, 8 * credit}
	for i := range accs {
		if got := w.tx.balances[accs[i].ID]; got != want[i] {
			t.Errorf("%s: balance %d, want %d", accs[i].ID, got, want[i])
		}
	}
}
