package dispatch

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/intake/intaketest"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// fakeHolders holds senders for accounts and counts the questions.
type fakeHolders struct {
	mu    sync.Mutex
	held  map[string]string // value key → account
	asked []string
	err   error
}

func (h *fakeHolders) SenderOwners(_ context.Context, _ domain.Channel, value string) ([]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.asked = append(h.asked, value)
	if h.err != nil {
		return nil, h.err
	}
	if acc, ok := h.held[domain.SenderKey(value)]; ok {
		return []string{acc}, nil
	}
	return nil, nil
}

func (h *fakeHolders) set(f func(h *fakeHolders)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f(h)
}

// A message that names no sender goes out from its provider's own sender.
// When another account holds that sender, the route's next provider takes
// the message, else it fails NO_ROUTE and is refunded; the holder's own
// messages, and messages naming a sender (the provider then sends from
// that one), still take it. Who holds what is
// asked once per sender per batch, and again in the next batch.
func TestDispatchKeepsAHeldRouteSenderToItsAccount(t *testing.T) {
	ctx := context.Background()
	shared, backup := &fakeProvider{name: "shared"}, &fakeProvider{name: "backup"}
	f := newFixture(t, fakeRoutes{domain.SMS: shared}, "", false)
	router := provider.NewRouter(nil, []provider.Route{
		{Channel: domain.SMS, Countries: []string{"55"}, Primary: shared},
		{Channel: domain.SMS, Countries: []string{"44"}, Primary: shared, Secondary: backup},
	})
	router.SetOwnSender("shared", "+15550001111", false)
	router.SetOwnSender("backup", "15550002222", false)
	holders := &fakeHolders{held: map[string]string{"15550001111": "acc_other"}}
	f.disp = NewDispatcher(DispatcherConfig{Store: f.st, Routes: router, Tracker: f.tracker, Owner: "node-1", Now: f.clock,
		Holders: holders, Log: quietLog()})

	f.caller.Account.Senders = domain.Senders{domain.SMS: {Values: []string{"MyShop"}}}
	noRoute := f.send(t, intaketest.Draft{To: "5511999990010", Text: "hi", Type: "SMS"})
	failedOver := f.send(t, intaketest.Draft{To: "447911123456", Text: "hi", Type: "SMS"})
	named := f.send(t, intaketest.Draft{To: "5511999990013", Text: "hi", Type: "SMS", From: "MyShop"})
	f.dispatch(t)
	if m, _ := f.st.MessageByID(ctx, named); m.Provider != "shared" || m.Status != domain.Sent {
		t.Errorf("naming a sender of its own: %s via %q, want SENT via shared", m.Status, m.Provider)
	}
	if m, _ := f.st.MessageByID(ctx, noRoute); m.Status != domain.Failed || m.ErrorCode != domain.CodeNoRoute {
		t.Errorf("no other provider: %s %q, want FAILED NO_ROUTE", m.Status, m.ErrorCode)
	}
	if debits, refunds := f.bill(ctx, noRoute); debits == 0 || refunds != debits {
		t.Errorf("no other provider: debited %d, refunded %d", debits, refunds)
	}
	if m, _ := f.st.MessageByID(ctx, failedOver); m.Provider != "backup" || m.Status != domain.Sent {
		t.Errorf("with a secondary: %s via %q, want SENT via backup", m.Status, m.Provider)
	}
	if want := []string{"15550001111", "15550002222"}; !slices.Equal(holders.asked, want) {
		t.Errorf("asked %q, want %q: each own sender once for the batch, as accounts hold it (digits)", holders.asked, want)
	}

	// The holder's messages go out from it.
	holders.set(func(h *fakeHolders) { h.held["15550001111"], h.asked = f.caller.Account.ID, nil })
	own := f.send(t, intaketest.Draft{To: "5511999990011", Text: "hi", Type: "SMS"})
	f.dispatch(t)
	if m, _ := f.st.MessageByID(ctx, own); m.Provider != "shared" || m.Status != domain.Sent {
		t.Errorf("the holder's message: %s via %q, want SENT via shared", m.Status, m.Provider)
	}
	if len(holders.asked) != 1 {
		t.Errorf("the next batch asked %d times, want once again", len(holders.asked))
	}

	// Not knowing who holds it, nothing is handed over and nothing fails:
	// the message waits for its lease to lapse.
	holders.set(func(h *fakeHolders) { h.err = errors.New("database down") })
	unsure := f.send(t, intaketest.Draft{To: "5511999990012", Text: "hi", Type: "SMS"})
	if _, err := f.disp.RunOnce(ctx); err == nil {
		t.Error("a failed lookup was not reported")
	}
	if m, _ := f.st.MessageByID(ctx, unsure); m.Status != domain.Sending || m.Provider == "backup" {
		t.Errorf("after a failed lookup: %s via %q, want still SENDING", m.Status, m.Provider)
	}
	for _, p := range []*fakeProvider{shared, backup} {
		for _, o := range p.got {
			if o.ID == unsure {
				t.Errorf("%s got the message whose sender could not be checked", p.name)
			}
		}
	}
}
