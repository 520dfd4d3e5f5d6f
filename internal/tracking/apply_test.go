package tracking

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/tracking/trackingtest"
)

var _ Tx = (*trackingtest.Tx)(nil)
var _ Store = (*trackingtest.Store)(nil)

// t0 is when the messages of these tests were accepted; the tracker's
// clock reads a minute later.
var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

// charged is an SMS accepted for one credit, leased to node n1 for its
// hand-over.
func charged(id string) domain.Message {
	return domain.Message{ID: id, CampaignID: "cmp_" + id, AccountID: "acc_1", Env: domain.Live, To: "5511999990010",
		CountryCode: "BR", Type: domain.SMS, Channel: domain.SMS, Status: domain.Sending, Segments: 1, Credits: ledger.Micro,
		Charged: ledger.Micro, Provider: "smsc", CreatedAt: t0, UpdatedAt: t0, ExpiresAt: t0.Add(24 * time.Hour),
		LeaseOwner: "n1", NextAttemptAt: t0.Add(time.Minute), CallbackURL: "https://hooks.example.com/cb"}
}

// recorder is a front's notifier that keeps what it was told, per call.
type recorder struct {
	changes [][]Change
	replies []Reply
	after   int // After functions run (once their transaction committed)
	fail    error
}

func (r *recorder) Changed(_ context.Context, tx *trackingtest.Tx, cs []Change) (After, error) {
	if r.fail != nil {
		return nil, r.fail
	}
	r.changes = append(r.changes, cs)
	// What a front writes goes in the same transaction: an event per step.
	var evs []domain.Event
	for _, c := range cs {
		for _, st := range c.Steps {
			evs = append(evs, domain.Event{ID: c.Message.ID + "/" + string(st), MessageID: c.Message.ID, Event: string(st)})
		}
	}
	if err := tx.InsertEvents(context.Background(), evs); err != nil {
		return nil, err
	}
	return func(context.Context) { r.after++ }, nil
}

func (r *recorder) Received(_ context.Context, _ *trackingtest.Tx, rp Reply) (After, error) {
	r.replies = append(r.replies, rp)
	return nil, nil
}

// steps lists, per notification call, each change as "id:WAS>STEP,STEP".
func (r *recorder) steps() [][]string {
	var out [][]string
	for _, cs := range r.changes {
		var call []string
		for _, c := range cs {
			s := c.Message.ID + ":" + string(c.Was) + ">"
			for i, st := range c.Steps {
				if i > 0 {
					s += ","
				}
				s += string(st)
			}
			call = append(call, s)
		}
		out = append(out, call)
	}
	return out
}

// chargedTracker is a tracker on a store that holds a charged message for
// each id.
func chargedTracker(t *testing.T, ids ...string) (*trackingtest.Store, *recorder, *Tracker) {
	t.Helper()
	st := &trackingtest.Store{}
	for _, id := range ids {
		st.Put(charged(id))
	}
	rec := &recorder{}
	return st, rec, newTestTracker(t, st, rec)
}

func newTestTracker(t *testing.T, st *trackingtest.Store, rec *recorder) *Tracker {
	t.Helper()
	w := Bind(st, func(tx *trackingtest.Tx) Tx { return tx },
		Notify(func(tx *trackingtest.Tx) *trackingtest.Tx { return tx }, rec))
	// Late, as a node on SQLite runs it; the tracker of chain_store_test
	// gathers its groups first, as on PostgreSQL.
	tr := NewTracker(Config{Store: st, Writer: w, Late: true, Now: func() time.Time { return t0.Add(time.Minute) }})
	t.Cleanup(tr.Close)
	return tr
}

// A batch of reports is one transaction: the hand-over and the receipt
// that rode with it move one message through SENT to DELIVERED, a refused
// hand-over fails another and refunds it, a receipt for a reference no
// message carries is parked, and a report about a message that is gone
// changes nothing. The notifier gets every step, in order, in that
// transaction, and its After runs once it committed.
func TestApplyBatch(t *testing.T) {
	ctx := context.Background()
	st := &trackingtest.Store{}
	st.Put(charged("m1"), charged("m2"))
	st.Seed(func(r *trackingtest.Rows) { r.Balances = map[string]int64{"acc_1": 5 * ledger.Micro} })
	rec := &recorder{}
	tr := newTestTracker(t, st, rec)
	at := t0.Add(30 * time.Second)
	err := tr.Apply(ctx, []Report{
		{Kind: Accepted, MessageID: "m1", Provider: "smsc", Ref: "r1", LeaseOwner: "n1", At: at},
		{Kind: Progress, MessageID: "m1", Provider: "smsc", Ref: "r1", Status: domain.Delivered, At: at.Add(time.Second)},
		{Kind: Rejected, MessageID: "m2", Provider: "smsc", ErrorCode: domain.CodeInvalidNumber, LeaseOwner: "n1", At: at},
		{Kind: Progress, Provider: "smsc", Ref: "nobody", Status: domain.Delivered, At: at},
		{Kind: Progress, MessageID: "purged", Status: domain.Delivered, At: at},
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.Writes != 1 {
		t.Fatalf("%d transactions, want one for the batch", st.Writes)
	}
	want := [][]string{{"m1:SENDING>SENT", "m1:SENT>DELIVERED", "m2:SENDING>FAILED"}}
	if got := rec.steps(); !reflect.DeepEqual(got, want) || rec.after != 1 {
		t.Fatalf("notified %v (after ran %d times), want %v once", got, rec.after, want)
	}
	rows := st.Rows()
	m1, m2 := rows.Messages["m1"], rows.Messages["m2"]
	if m1.Status != domain.Delivered || m1.ProviderRef != "r1" || m1.LeaseOwner != "" || !m1.SentAt.Equal(at) ||
		!m1.DeliveredAt.Equal(at.Add(time.Second)) || m1.Charged != ledger.Micro {
		t.Fatalf("m1 %+v, want DELIVERED by r1, sent at %s, still charged", m1, at)
	}
	if m2.Status != domain.Failed || m2.ErrorCode != domain.CodeInvalidNumber || m2.ErrorMessage == "" || m2.Charged != 0 {
		t.Fatalf("m2 %+v, want FAILED with INVALID_NUMBER and nothing charged", m2)
	}
	if len(rows.Ledger) != 1 || rows.Ledger[0].Kind != ledger.Refund || rows.Ledger[0].MessageID != "m2" ||
		rows.Ledger[0].Amount != ledger.Micro || rows.Ledger[0].BalanceAfter != 6*ledger.Micro || rows.Balances["acc_1"] != 6*ledger.Micro {
		t.Fatalf("ledger %+v, balance %d; want one refund of m2's credit", rows.Ledger, rows.Balances["acc_1"])
	}
	if len(rows.Parked) != 1 || rows.Parked[0].Ref != "nobody" || rows.Parked[0].Status != domain.Delivered {
		t.Fatalf("parked %+v, want the receipt for an unknown reference", rows.Parked)
	}
	// Usage moves each message from SENDING to its final status; the
	// refund takes m2's credits off.
	net := map[domain.Status]int64{}
	var msgs, credits int64
	for _, d := range rows.Usage {
		for i, st := range domain.Statuses {
			net[st] += d.Statuses[i]
		}
		msgs += d.Messages
		credits += d.Credits
	}
	if want := (map[domain.Status]int64{domain.Sending: -2, domain.Sent: 0, domain.Delivered: 1, domain.Read: 0, domain.Failed: 1,
		domain.Canceled: 0}); !reflect.DeepEqual(net, want) || msgs != 0 || credits != -ledger.Micro {
		t.Fatalf("usage moved statuses by %v, messages by %d, credits by %d; want %v, 0, the refund", net, msgs, credits, want)
	}
	if len(rows.Events) != 3 || rows.Events[0].ID != "m1/SENT" || rows.Events[1].ID != "m1/DELIVERED" || rows.Events[2].ID != "m2/FAILED" {
		t.Fatalf("events %+v, want the notifier's three in the transaction", rows.Events)
	}
}

// Each change carries the message as its own report left it, also when
// later reports of the same batch move the message on: the notifiers write
// what each step looked like (its status, its times), not the batch's end.
func TestEachChangeCarriesItsOwnMessage(t *testing.T) {
	ctx := context.Background()
	st, rec, tr := chargedTracker(t, "m1", "m2")
	at := t0.Add(30 * time.Second)
	err := tr.Apply(ctx, []Report{
		{Kind: Accepted, MessageID: "m1", Provider: "smsc", Ref: "r1", LeaseOwner: "n1", At: at},
		{Kind: Accepted, MessageID: "m2", Provider: "smsc", Ref: "r2", LeaseOwner: "n1", At: at},
		{Kind: Progress, MessageID: "m1", Provider: "smsc", Ref: "r1", Status: domain.Delivered, At: at.Add(time.Second)},
		{Kind: Progress, MessageID: "m1", Provider: "smsc", Ref: "r1", Status: domain.Read, At: at.Add(2 * time.Second)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.changes) != 1 || len(rec.changes[0]) != 4 {
		t.Fatalf("notified %v, want four changes in one call", rec.steps())
	}
	cs := rec.changes[0]
	type seen struct {
		id              string
		status          domain.Status
		delivered, read bool
	}
	var got []seen
	for _, c := range cs {
		got = append(got, seen{c.Message.ID, c.Message.Status, !c.Message.DeliveredAt.IsZero(), !c.Message.ReadAt.IsZero()})
	}
	want := []seen{{"m1", domain.Sent, false, false}, {"m2", domain.Sent, false, false},
		{"m1", domain.Delivered, true, false}, {"m1", domain.Read, true, true}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the changes carry %+v, want %+v", got, want)
	}
	rows := st.Rows()
	if m1 := rows.Messages["m1"]; !reflect.DeepEqual(m1, *cs[3].Message) {
		t.Fatalf("m1 written as %+v, the last change carries %+v", m1, *cs[3].Message)
	}
	if m2 := rows.Messages["m2"]; !reflect.DeepEqual(m2, *cs[1].Message) {
		t.Fatalf("m2 written as %+v, its change carries %+v", m2, *cs[1].Message)
	}
}

// Statuses only move forward: a late SENT after DELIVERED, anything after
// FAILED or CANCELED, and a cancel of a message a provider has are
// dropped, notifying nothing; READ before DELIVERED passes through it.
func TestTransitionsForwardOnly(t *testing.T) {
	at := t0.Add(time.Minute)
	with := func(st domain.Status) domain.Message {
		m := charged("m")
		m.Status, m.LeaseOwner, m.NextAttemptAt = st, "", time.Time{}
		return m
	}
	cases := []struct {
		name  string
		m     domain.Message
		r     Report
		steps []domain.Status
		now   domain.Status
	}{
		{"SENT after DELIVERED", with(domain.Delivered), Report{Kind: Progress, Status: domain.Sent}, nil, domain.Delivered},
		{"DELIVERED after FAILED", with(domain.Failed), Report{Kind: Progress, Status: domain.Delivered}, nil, domain.Failed},
		{"FAILED after READ", with(domain.Read), Report{Kind: Progress, Status: domain.Failed}, nil, domain.Read},
		{"cancel once handed over", with(domain.Sent), Report{Kind: Cancel}, nil, domain.Sent},
		{"accepted twice", with(domain.Sent), Report{Kind: Accepted, Provider: "smsc", Ref: "again"}, nil, domain.Sent},
		{"READ straight from SENT", with(domain.Sent), Report{Kind: Progress, Status: domain.Read},
			[]domain.Status{domain.Delivered, domain.Read}, domain.Read},
		{"DELIVERED before the hand-over's answer", with(domain.Sending), Report{Kind: Progress, Status: domain.Delivered},
			[]domain.Status{domain.Sent, domain.Delivered}, domain.Delivered},
		{"another node's hand-over", charged("m"), Report{Kind: Accepted, Provider: "smsc", Ref: "r", LeaseOwner: "n2"}, nil, domain.Sending},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := c.m
			steps, refund := transition(&m, c.r, at)
			if !reflect.DeepEqual(steps, c.steps) || m.Status != c.now || refund.amount != 0 {
				t.Fatalf("steps %v, now %s, refund %d; want %v, %s, none", steps, m.Status, refund.amount, c.steps, c.now)
			}
		})
	}
}

// A charged message that fails before any provider took it is refunded
// in full, with the code it failed with; one that fails after a provider
// took it is not (the provider was paid); expiry refunds a message still
// waiting; a test key's message, charged nothing, refunds nothing.
func TestFailureRefunds(t *testing.T) {
	at := t0.Add(time.Minute)
	sent := charged("m")
	sent.Status, sent.LeaseOwner, sent.NextAttemptAt = domain.Sent, "", time.Time{}
	free := charged("m")
	free.Charged = 0
	cases := []struct {
		name   string
		m      domain.Message
		r      Report
		refund int64
		code   string
	}{
		{"refused at the hand-over", charged("m"), Report{Kind: Rejected, ErrorCode: domain.CodeRejected, LeaseOwner: "n1"},
			ledger.Micro, domain.CodeRejected},
		{"no route", charged("m"), Report{Kind: Rejected, ErrorCode: domain.CodeNoRoute, LeaseOwner: "n1"}, ledger.Micro, domain.CodeNoRoute},
		{"expired while waiting", charged("m"), Report{Kind: Expire}, ledger.Micro, domain.CodeExpired},
		{"undelivered after the hand-over", sent, Report{Kind: Progress, Status: domain.Failed, ErrorCode: domain.CodeUndelivered}, 0,
			domain.CodeUndelivered},
		{"a test key's message", free, Report{Kind: Rejected, ErrorCode: domain.CodeRejected, LeaseOwner: "n1"}, 0, domain.CodeRejected},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := c.m
			steps, refund := transition(&m, c.r, at)
			if !reflect.DeepEqual(steps, []domain.Status{domain.Failed}) || m.Status != domain.Failed || m.ErrorCode != c.code {
				t.Fatalf("steps %v, status %s, code %s; want FAILED with %s", steps, m.Status, m.ErrorCode, c.code)
			}
			if refund.amount != c.refund || m.Charged != c.m.Charged-c.refund {
				t.Fatalf("refund %d, charged now %d; want refund %d", refund.amount, m.Charged, c.refund)
			}
			if c.refund > 0 && refund.note == "" {
				t.Fatal("a refund without its note")
			}
		})
	}
}

// A receipt that comes before the answer to its submission is parked; the
// answer that records its reference applies it in the same transaction,
// after the hand-over's own change. A parked receipt whose reference a
// message carries by other means is applied by Unpark.
func TestLateAndParkedReports(t *testing.T) {
	ctx := context.Background()
	st, rec, tr := chargedTracker(t, "m1", "m2")
	at := t0.Add(30 * time.Second)
	if err := tr.Apply(ctx, []Report{{Kind: Progress, Provider: "smsc", Ref: "r1", Status: domain.Delivered, At: at}}); err != nil {
		t.Fatal(err)
	}
	if rows := st.Rows(); len(rows.Parked) != 1 || rows.Messages["m1"].Status != domain.Sending || len(rec.changes) != 0 {
		t.Fatalf("parked %+v, m1 %s, notified %v; want the receipt parked and nothing else", rows.Parked, rows.Messages["m1"].Status,
			rec.steps())
	}
	if err := tr.Apply(ctx, []Report{{Kind: Accepted, MessageID: "m1", Provider: "smsc", Ref: "r1", LeaseOwner: "n1", At: at}}); err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"m1:SENDING>SENT"}, {"m1:SENT>DELIVERED"}}
	if rows := st.Rows(); len(rows.Parked) != 0 || rows.Messages["m1"].Status != domain.Delivered || !reflect.DeepEqual(rec.steps(), want) ||
		st.Writes != 2 {
		t.Fatalf("parked %+v, m1 %s, notified %v in %d transactions; want DELIVERED, %v", rows.Parked, rows.Messages["m1"].Status,
			rec.steps(), st.Writes, want)
	}

	// m2 got its reference without a report of ours (another node's
	// record): the sweeper's Unpark applies what waits for it.
	if err := tr.Apply(ctx, []Report{{Kind: Progress, Provider: "smsc", Ref: "r2", Status: domain.Failed,
		ErrorCode: domain.CodeUndelivered, At: at}}); err != nil {
		t.Fatal(err)
	}
	m2 := st.Message("m2")
	m2.Status, m2.ProviderRef, m2.LeaseOwner = domain.Sent, "r2", ""
	st.Put(m2)
	n, err := tr.Unpark(ctx)
	if err != nil || n != 1 {
		t.Fatalf("unparked %d (%v), want 1", n, err)
	}
	if got := st.Message("m2"); got.Status != domain.Failed || got.ErrorCode != domain.CodeUndelivered || got.Charged != ledger.Micro {
		t.Fatalf("m2 %+v, want FAILED, still charged (its provider had it)", got)
	}
	if n, err := tr.Unpark(ctx); err != nil || n != 0 {
		t.Fatalf("unparked again %d (%v), want nothing left", n, err)
	}
}

// A long message is decided by its parts: DELIVERED once every part is,
// FAILED as soon as one fails.
func TestPartsDecideTheMessage(t *testing.T) {
	ctx := context.Background()
	st, rec, tr := chargedTracker(t, "m1", "m2")
	at := t0.Add(30 * time.Second)
	if err := tr.Apply(ctx, []Report{
		{Kind: Accepted, MessageID: "m1", Provider: "smsc", Ref: "a1", Parts: []string{"a1", "a2"}, LeaseOwner: "n1", At: at},
		{Kind: Accepted, MessageID: "m2", Provider: "smsc", Ref: "b1", Parts: []string{"b1", "b2"}, LeaseOwner: "n1", At: at},
	}); err != nil {
		t.Fatal(err)
	}
	if err := tr.Apply(ctx, []Report{
		{Kind: Progress, Provider: "smsc", Ref: "a1", Status: domain.Delivered, At: at},
		{Kind: Progress, Provider: "smsc", Ref: "b2", Status: domain.Failed, ErrorCode: domain.CodeUndelivered, At: at},
	}); err != nil {
		t.Fatal(err)
	}
	if m1, m2 := st.Message("m1"), st.Message("m2"); m1.Status != domain.Sent || m2.Status != domain.Failed {
		t.Fatalf("m1 %s, m2 %s; want m1 waiting for its second part, m2 FAILED by one", m1.Status, m2.Status)
	}
	if err := tr.Apply(ctx, []Report{{Kind: Progress, Provider: "smsc", Ref: "a2", Status: domain.Delivered, At: at}}); err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"m1:SENDING>SENT", "m2:SENDING>SENT"}, {"m2:SENT>FAILED"}, {"m1:SENT>DELIVERED"}}
	if got := rec.steps(); st.Message("m1").Status != domain.Delivered || !reflect.DeepEqual(got, want) {
		t.Fatalf("m1 %s, notified %v; want DELIVERED once its last part is, %v", st.Message("m1").Status, got, want)
	}
}

// When the transaction fails, nothing it wrote stays, notifications
// included, and no notifier's After runs; a notifier's error fails it.
func TestFailedTransactionNotifiesNobody(t *testing.T) {
	ctx := context.Background()
	st, rec, tr := chargedTracker(t, "m1")
	st.Fail = errors.New("disk full")
	if err := tr.Apply(ctx, []Report{{Kind: Expire, MessageID: "m1", At: t0}}); err == nil {
		t.Fatal("the failed commit was not reported")
	}
	if rows := st.Rows(); rows.Messages["m1"].Status != domain.Sending || len(rows.Events) != 0 || len(rows.Ledger) != 0 || rec.after != 0 {
		t.Fatalf("after a failed commit: m1 %s, %d events, %d ledger lines, after ran %d times", rows.Messages["m1"].Status,
			len(rows.Events), len(rows.Ledger), rec.after)
	}
	rec.fail = errors.New("front refused")
	if err := tr.Apply(ctx, []Report{{Kind: Expire, MessageID: "m1", At: t0}}); !errors.Is(err, rec.fail) {
		t.Fatalf("a notifier's error: %v", err)
	}
	if st.Message("m1").Status != domain.Sending || st.Writes != 0 {
		t.Fatal("a change was recorded without its notification")
	}
}

// Cancel ends only messages no provider has, refunds them and notifies
// CANCELED; Redact cancels a message still waiting first, and erases it.
func TestCancelAndRedact(t *testing.T) {
	ctx := context.Background()
	st := &trackingtest.Store{}
	waiting, handed, redacted := charged("m1"), charged("m2"), charged("m3")
	waiting.LeaseOwner, waiting.NextAttemptAt = "", t0.Add(time.Hour) // scheduled
	handed.Status, handed.LeaseOwner, handed.NextAttemptAt = domain.Sent, "", time.Time{}
	redacted.LeaseOwner, redacted.NextAttemptAt = "", t0.Add(time.Hour)
	st.Put(waiting, handed, redacted)
	rec := &recorder{}
	tr := newTestTracker(t, st, rec)
	got, err := tr.Cancel(ctx, []string{"m1", "m2", "nope"})
	if err != nil || len(got) != 1 || got[0].ID != "m1" || got[0].Status != domain.Canceled || got[0].Charged != 0 {
		t.Fatalf("canceled %+v (%v), want only m1, refunded", got, err)
	}
	r := domain.Redaction{Phone: func(string) string { return "hashed" }}
	m, err := tr.Redact(ctx, "m3", r)
	if err != nil || m.Status != domain.Canceled || m.Body != "" {
		t.Fatalf("redacted %+v (%v), want m3 canceled and erased", m, err)
	}
	if _, err := tr.Redact(ctx, "nope", r); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("redact of an unknown message: %v", err)
	}
	want := [][]string{{"m1:SENDING>CANCELED"}, {"m3:SENDING>CANCELED"}}
	rows := st.Rows()
	if !reflect.DeepEqual(rec.steps(), want) || len(rows.Ledger) != 2 || rows.Ledger[0].Note != "canceled" || rows.Redacted["m3"].Phone == nil {
		t.Fatalf("notified %v, ledger %+v, redacted %v; want %v with two refunds", rec.steps(), rows.Ledger, rows.Redacted, want)
	}
}

// A reply is recorded, matched to the campaign it answers and handed to
// the notifiers in its transaction; a stop word adds the number to the
// opt-out list and queues the account's confirmation, due at once. The
// same reply delivered again by its provider notifies nobody.
func TestReplyWithAStopWord(t *testing.T) {
	ctx := context.Background()
	st := &trackingtest.Store{}
	sent := charged("m1")
	sent.Status, sent.From = domain.Delivered, "4915"
	st.Put(sent)
	st.Seed(func(r *trackingtest.Rows) {
		r.Accounts = map[string]domain.Account{"acc_1": {ID: "acc_1", Compliance: domain.Compliance{OptOutReply: "You will get no more."},
			Senders: domain.Senders{domain.SMS: {Default: "4915", Values: []string{"4915"}}}}}
	})
	rec := &recorder{}
	tr := newTestTracker(t, st, rec)
	due := 0
	tr.due = func() { due++ }
	in := provider.Inbound{AccountID: "acc_1", Env: domain.Live, From: "5511999990010", To: "4915", Channel: domain.SMS,
		Body: "STOP", Ref: "mo-1", At: t0.Add(time.Hour)}
	cid, err := tr.Receive(ctx, "smsc", in)
	if err != nil || cid != sent.CampaignID {
		t.Fatalf("matched %q (%v), want %s", cid, err, sent.CampaignID)
	}
	if _, err := tr.Receive(ctx, "smsc", in); err != nil {
		t.Fatal(err)
	}
	rows := st.Rows()
	if len(rows.Inbound) != 1 || rows.Inbound[0].CampaignID != sent.CampaignID || rows.Inbound[0].Body != "STOP" {
		t.Fatalf("inbound %+v, want the one reply, matched", rows.Inbound)
	}
	if len(rec.replies) != 1 || rec.replies[0].Inbound.ID != rows.Inbound[0].ID || rec.replies[0].Answers.ID != "m1" ||
		rec.replies[0].To != "4915" || !rec.replies[0].At.Equal(in.At) {
		t.Fatalf("notified %+v, want the reply once, answering m1", rec.replies)
	}
	if len(rows.OptOuts) != 1 || rows.OptOuts[0].Phone != "5511999990010" || rows.OptOuts[0].Source != domain.OptOutReply {
		t.Fatalf("opt-outs %+v", rows.OptOuts)
	}
	var confirm domain.Message
	for _, m := range rows.Messages {
		if m.ID != "m1" {
			confirm = m
		}
	}
	if confirm.Body != "You will get no more." || confirm.From != "4915" || confirm.To != "5511999990010" ||
		confirm.Status != domain.Sending || confirm.Charged != 0 || due != 1 || len(rows.Campaigns) != 1 {
		t.Fatalf("confirmation %+v (woke the dispatcher %d times), want one due at once, charged nothing", confirm, due)
	}
}
