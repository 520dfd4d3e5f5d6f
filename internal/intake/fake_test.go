package intake

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/fraud"
	"github.com/msgsvc/msgsvc/internal/ledger"
)

// fakeTx is SendTx in memory: what the group commit writes, kept in maps,
// with the refusals the store makes (a balance that would go below zero, a
// day's conversations over the limit, a key already claimed).
type fakeTx struct {
	balances      map[string]int64
	ledger        []ledger.Entry
	campaigns     []domain.Campaign
	messages      []domain.Message
	usage         []domain.UsageDelta
	events        []domain.Event
	marks         map[string]bool
	keys          map[[2]string]domain.Idempotency
	conversations map[string]int // opened, by account, environment and day
	opened        []string       // phones whose conversations were recorded
	optOuts       map[string]bool
	authVersion   int64
	accounts      map[string]domain.Account // the tree: what Ancestors reads
	ancestorReads int
	fraud         *fraud.Memory // the guard's counts and hour marks, not rolled back
}

func newFakeTx() *fakeTx {
	return &fakeTx{balances: map[string]int64{}, marks: map[string]bool{}, keys: map[[2]string]domain.Idempotency{},
		conversations: map[string]int{}, optOuts: map[string]bool{}, fraud: fraud.NewMemory()}
}

func (f *fakeTx) AddFraudCounts(ctx context.Context, cs []domain.FraudCount) ([]int64, error) {
	return f.fraud.AddFraudCounts(ctx, cs)
}

func (f *fakeTx) TrailingFraudCounts(ctx context.Context, cs []domain.FraudCount, window int64) ([]int64, error) {
	return f.fraud.TrailingFraudCounts(ctx, cs, window)
}

func (f *fakeTx) MarkFraudHours(ctx context.Context, hs []domain.FraudHour) ([]bool, error) {
	return f.fraud.MarkFraudHours(ctx, hs)
}

// clone is a copy that writes of its own leave the original alone.
func (f *fakeTx) clone() *fakeTx {
	c := *f
	c.balances, c.marks, c.keys = maps.Clone(f.balances), maps.Clone(f.marks), maps.Clone(f.keys)
	c.conversations, c.optOuts = maps.Clone(f.conversations), maps.Clone(f.optOuts)
	c.accounts = maps.Clone(f.accounts)
	c.ledger, c.campaigns, c.messages = slices.Clone(f.ledger), slices.Clone(f.campaigns), slices.Clone(f.messages)
	c.usage, c.events, c.opened = slices.Clone(f.usage), slices.Clone(f.events), slices.Clone(f.opened)
	return &c
}

func (f *fakeTx) AddBalance(_ context.Context, accountID string, delta int64, _ time.Time) (int64, error) {
	b := f.balances[accountID] + delta
	if b < 0 {
		return 0, ledger.ErrInsufficientCredits
	}
	f.balances[accountID] = b
	return b, nil
}

func (f *fakeTx) InsertLedger(_ context.Context, entries []ledger.Entry) error {
	f.ledger = append(f.ledger, entries...)
	return nil
}

func (f *fakeTx) BalanceRose(context.Context, string, int64) error { return nil }

func (f *fakeTx) AddUsage(_ context.Context, deltas []domain.UsageDelta) error {
	f.usage = append(f.usage, deltas...)
	return nil
}

func (f *fakeTx) MarkAlert(_ context.Context, accountID, event, period, _ string, _ time.Time) (bool, error) {
	return f.mark(accountID + "/" + event + "/" + period), nil
}

func (f *fakeTx) MarkSpend(_ context.Context, accountID string, day, threshold int64, _ string, _ time.Time) (bool, error) {
	return f.mark(accountID + "/spend/" + time.Unix(day, threshold).String()), nil
}

func (f *fakeTx) mark(k string) bool {
	if f.marks[k] {
		return false
	}
	f.marks[k] = true
	return true
}

func (f *fakeTx) InsertEvents(_ context.Context, evs []domain.Event) error {
	f.events = append(f.events, evs...)
	return nil
}

func (f *fakeTx) InsertCampaign(_ context.Context, c domain.Campaign) error {
	f.campaigns = append(f.campaigns, c)
	return nil
}

func (f *fakeTx) InsertCampaigns(_ context.Context, cs []domain.Campaign) error {
	f.campaigns = append(f.campaigns, cs...)
	return nil
}

func (f *fakeTx) InsertMessages(_ context.Context, msgs []domain.Message) error {
	f.messages = append(f.messages, msgs...)
	return nil
}

func (f *fakeTx) ClaimIdempotency(_ context.Context, in domain.Idempotency) (domain.Idempotency, bool, error) {
	k := [2]string{in.KeyID, in.Key}
	if prev, ok := f.keys[k]; ok {
		return prev, false, nil
	}
	f.keys[k] = in
	return in, true, nil
}

func (f *fakeTx) ForgetIdempotency(_ context.Context, keyID, key string) error {
	delete(f.keys, [2]string{keyID, key})
	return nil
}

func conversationDay(c *domain.Conversations) string {
	return c.AccountID + "/" + string(c.Env) + "/" + domain.DayKey(c.Day)
}

func (f *fakeTx) ReserveConversations(_ context.Context, c *domain.Conversations) error {
	if c == nil || len(c.Phones) == 0 {
		return nil
	}
	k, n := conversationDay(c), len(c.Phones)
	if used := f.conversations[k]; c.Limit > 0 && used+n > c.Limit {
		return &domain.DailyLimitError{Day: domain.DayKey(c.Day), Limit: c.Limit, Used: used, Asked: n}
	}
	f.conversations[k] += n
	return nil
}

func (f *fakeTx) ReleaseConversations(_ context.Context, c *domain.Conversations) error {
	if c != nil && len(c.Phones) > 0 {
		f.conversations[conversationDay(c)] -= len(c.Phones)
	}
	return nil
}

func (f *fakeTx) RecordConversations(_ context.Context, c *domain.Conversations) error {
	if c != nil {
		f.opened = append(f.opened, c.Phones...)
	}
	return nil
}

func (f *fakeTx) OptedOut(_ context.Context, accountID string, env domain.Environment, phones []string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, p := range phones {
		if f.optOuts[accountID+"/"+string(env)+"/"+p] {
			out[p] = true
		}
	}
	return out, nil
}

func (f *fakeTx) AuthVersion(context.Context) (int64, error) { return f.authVersion, nil }

func (f *fakeTx) Ancestors(_ context.Context, accountID string) ([]domain.Account, error) {
	f.ancestorReads++
	var out []domain.Account
	for p := f.accounts[accountID].ParentID; p != ""; p = f.accounts[p].ParentID {
		a, ok := f.accounts[p]
		if !ok {
			return nil, domain.ErrNotFound
		}
		out = append(out, a)
	}
	return out, nil
}

// fakeWriter runs each function in a transaction of its own over one
// fakeTx: a function that fails leaves nothing written, as the store's
// savepoints do.
type fakeWriter struct{ tx *fakeTx }

func (w *fakeWriter) Write(_ context.Context, fn func(tx SendTx) error) error {
	work := w.tx.clone()
	if err := fn(work); err != nil {
		return err
	}
	w.tx = work
	return nil
}

var _ SendTx = (*fakeTx)(nil)
