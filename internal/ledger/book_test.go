package ledger

import (
	"context"
	"reflect"
	"testing"
	"time"
)

// fakeTx is an account's balance and its ledger, counting statements.
type fakeTx struct {
	balance int64
	updates int
	inserts int
	lines   []Entry
}

func (f *fakeTx) AddBalance(_ context.Context, _ string, delta int64, _ time.Time) (int64, error) {
	f.updates++
	if f.balance+delta < 0 {
		return 0, ErrInsufficientCredits
	}
	f.balance += delta
	return f.balance, nil
}

func (f *fakeTx) InsertLedger(_ context.Context, entries []Entry) error {
	f.inserts++
	f.lines = append(f.lines, entries...)
	return nil
}

func (f *fakeTx) BalanceRose(context.Context, string, int64) error { return nil }

func TestReserveAll(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	send := func(c string, amounts ...int64) Send {
		s := Send{CampaignID: c, At: at}
		for i, a := range amounts {
			s.Charges = append(s.Charges, Charge{MessageID: c + "-m" + string(rune('0'+i)), Amount: a})
		}
		return s
	}
	type line struct {
		msg          string
		amount, left int64
	}
	tests := []struct {
		name             string
		balance          int64
		sends            []Send
		wantCharged      []bool
		wantLines        []line
		updates, inserts int
	}{
		{"all covered: one update, one insert", 10, []Send{send("a", 2, 3), send("b", 0), send("c", 1)},
			[]bool{true, true, true}, []line{{"a-m0", -2, 8}, {"a-m1", -3, 5}, {"c-m0", -1, 4}}, 1, 1},
		{"not all covered: in turn, the uncovered refused", 5, []Send{send("a", 3), send("b", 4), send("c", 2)},
			[]bool{true, false, true}, []line{{"a-m0", -3, 2}, {"c-m0", -2, 0}}, 4, 1},
		{"nothing to charge", 0, []Send{send("a", 0), send("b")}, []bool{true, true}, nil, 0, 0},
		{"nothing covered", 1, []Send{send("a", 2), send("b", 3)}, []bool{false, false}, nil, 3, 0},
	}
	for _, tc := range tests {
		tx := &fakeTx{balance: tc.balance}
		charged, after, err := ReserveAll(context.Background(), tx, "acc", tc.sends)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		want := After{}
		if len(tc.wantLines) > 0 {
			want = After{Balance: tx.balance, Debited: true}
		}
		if after != want {
			t.Errorf("%s: after %+v, want %+v", tc.name, after, want)
		}
		if !reflect.DeepEqual(charged, tc.wantCharged) {
			t.Errorf("%s: charged %v, want %v", tc.name, charged, tc.wantCharged)
		}
		var got []line
		var sum int64
		for _, e := range tx.lines {
			got = append(got, line{e.MessageID, e.Amount, e.BalanceAfter})
			sum += e.Amount
			if e.Kind != Debit || e.AccountID != "acc" || e.CampaignID != e.MessageID[:1] || e.ID == "" {
				t.Errorf("%s: line %+v", tc.name, e)
			}
		}
		if !reflect.DeepEqual(got, tc.wantLines) {
			t.Errorf("%s: lines %v, want %v", tc.name, got, tc.wantLines)
		}
		if tx.balance != tc.balance+sum {
			t.Errorf("%s: balance %d, lines sum to %d from %d", tc.name, tx.balance, sum, tc.balance)
		}
		if tx.updates != tc.updates || tx.inserts != tc.inserts {
			t.Errorf("%s: %d balance updates and %d inserts, want %d and %d", tc.name, tx.updates, tx.inserts, tc.updates, tc.inserts)
		}
	}
}
