package smppserver

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/dlr"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/tracking"
	"github.com/msgsvc/msgsvc/internal/tracking/trackingtest"
)

// write runs fn in a transaction of st and returns its After.
func write(t *testing.T, st *trackingtest.Store, fn func(tx *trackingtest.Tx) (tracking.After, error)) tracking.After {
	t.Helper()
	var after tracking.After
	if err := st.Write(context.Background(), func(tx *trackingtest.Tx) error {
		var err error
		after, err = fn(tx)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return after
}

// A message submitted over SMPP that asked for a receipt gets one when it
// reaches its first final status, the text dlr writes; an intermediate
// status, a message that asked for none and one already final get none. A
// message sent from its route's own sender is answered from it.
func TestReceiptsOfChanges(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	smpp := func(id, from string, st domain.Status, receipt bool) domain.Message {
		return domain.Message{ID: id, AccountID: "acc_1", Env: domain.Live, To: "5511999990010", From: from, Provider: "smsc",
			Type: domain.SMS, Channel: domain.SMS, Status: st, Body: "hello there", CreatedAt: t0,
			Content: domain.Content{SMPP: &domain.SMPPOrigin{User: "esme1", Receipt: receipt}}}
	}
	delivered := smpp("m1", "4915", domain.Delivered, true)
	own := smpp("m2", "", domain.Failed, true)
	own.ErrorCode = domain.CodeUndelivered
	at := t0.Add(time.Minute)
	cs := []tracking.Change{
		{Message: &delivered, Was: domain.Sent, Steps: []domain.Status{domain.Delivered}, At: at},
		{Message: new(smpp("m3", "4915", domain.Sent, true)), Was: domain.Sending, Steps: []domain.Status{domain.Sent}, At: at},
		{Message: new(smpp("m4", "4915", domain.Delivered, false)), Was: domain.Sent, Steps: []domain.Status{domain.Delivered}, At: at},
		{Message: new(smpp("m5", "4915", domain.Read, true)), Was: domain.Delivered, Steps: []domain.Status{domain.Read}, At: at},
		{Message: &own, Was: domain.Sent, Steps: []domain.Status{domain.Failed}, At: at},
	}
	woken := 0
	r := &Receipts{OwnSender: func(p string) string { return map[string]string{"smsc": "+4930123"}[p] }, Wake: func() { woken++ }}
	st := &trackingtest.Store{}
	after := write(t, st, func(tx *trackingtest.Tx) (tracking.After, error) { return r.Changed(context.Background(), tx, cs) })
	items := st.Rows().SMPPItems
	if len(items) != 2 {
		t.Fatalf("%d receipts, want m1's and m2's", len(items))
	}
	want := dlr.Item(delivered, at)
	want.ID = items[0].ID
	if !reflect.DeepEqual(items[0], want) || items[0].Dest != "4915" || items[0].State != dlr.StateDelivered {
		t.Fatalf("receipt %+v, want %+v", items[0], want)
	}
	if it := items[1]; it.MessageID != "m2" || it.Dest != "4930123" || it.State != dlr.StateUndeliverable || it.UserID != "esme1" {
		t.Fatalf("receipt of a message from the route's own sender: %+v", it)
	}
	if after == nil {
		t.Fatal("no wake after receipts were queued")
	}
	after(context.Background())
	if woken != 1 {
		t.Fatalf("woken %d times", woken)
	}
	if after := write(t, st, func(tx *trackingtest.Tx) (tracking.After, error) {
		return r.Changed(context.Background(), tx, cs[1:2])
	}); after != nil {
		t.Fatal("a wake without receipts")
	}
}

// An SMS reply goes to the SMPP user that sent the message it answers, or
// to any receiving bind of an account with SMPP users; none for another
// channel or an account without them.
func TestRepliesToSMPPUsers(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	users := &trackingtest.Store{}
	users.Seed(func(r *trackingtest.Rows) { r.SMPPUsers = map[string]bool{"acc_2/live": true} })
	r := &Receipts{Users: users}
	in := func(acc string, ch domain.Channel) domain.Inbound {
		return domain.Inbound{ID: "in_" + acc, AccountID: acc, Env: domain.Live, Phone: "5511999990010", Channel: ch, Body: "STOP"}
	}
	viaSMPP := domain.Message{ID: "m1", AccountID: "acc_1", From: "4915", Content: domain.Content{SMPP: &domain.SMPPOrigin{User: "esme1"}}}
	cases := []struct {
		name  string
		reply tracking.Reply
		user  string
		dest  string
		none  bool
	}{
		{"answer to an SMPP submit", tracking.Reply{Inbound: in("acc_1", domain.SMS), Answers: viaSMPP}, "esme1", "4915", false},
		{"the number written to wins", tracking.Reply{Inbound: in("acc_1", domain.SMS), To: "4916", Answers: viaSMPP}, "esme1", "4916", false},
		{"an account with SMPP users", tracking.Reply{Inbound: in("acc_2", domain.SMS), To: "4917"}, "", "4917", false},
		{"an account without", tracking.Reply{Inbound: in("acc_3", domain.SMS), To: "4917"}, "", "", true},
		{"WhatsApp", tracking.Reply{Inbound: in("acc_1", domain.WhatsApp), Answers: viaSMPP}, "", "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := &trackingtest.Store{}
			c.reply.Recorded = t0
			write(t, st, func(tx *trackingtest.Tx) (tracking.After, error) {
				return r.Received(context.Background(), tx, c.reply)
			})
			items := st.Rows().SMPPItems
			if c.none {
				if len(items) != 0 {
					t.Fatalf("items %+v, want none", items)
				}
				return
			}
			if len(items) != 1 {
				t.Fatalf("%d items, want one", len(items))
			}
			it := items[0]
			if it.UserID != c.user || it.Dest != c.dest || it.Source != "5511999990010" || it.Text != "STOP" ||
				it.MessageID != c.reply.Inbound.ID || !it.ExpiresAt.Equal(t0.Add(dlr.Keep)) || it.ESMClass != 0 {
				t.Fatalf("item %+v, want user %q dest %q", it, c.user, c.dest)
			}
		})
	}
}
