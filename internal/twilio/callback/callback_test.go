package callback

import (
	"cmp"
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/tracking"
	"github.com/msgsvc/msgsvc/internal/tracking/trackingtest"
	"github.com/msgsvc/msgsvc/internal/twilio/sid"
	"github.com/msgsvc/msgsvc/internal/webhook"
)

var t0 = time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)

const (
	ac1 = "AC11111111111111111111111111111111"
	ac2 = "AC22222222222222222222222222222222"
)

// tx is the in-memory transaction with the Twilio rows the store keeps:
// numbers by account and phone, and account SIDs by account and env.
type tx struct {
	*trackingtest.Tx
	numbers map[string]domain.TwilioNumber
	sids    map[string]domain.TwilioCredential
}

func (t tx) TwilioNumber(_ context.Context, accountID, phone string) (domain.TwilioNumber, bool, error) {
	n, ok := t.numbers[accountID+"/"+phone]
	return n, ok, nil
}

func (t tx) TwilioAccountSid(_ context.Context, accountID string, env domain.Environment) (domain.TwilioCredential, bool, error) {
	c, ok := t.sids[accountID+"/"+string(env)]
	return c, ok, nil
}

// handoff is a local webhook worker that keeps what it was handed.
type handoff struct{ got []domain.Event }

func (h *handoff) Owner() string        { return "node-1" }
func (h *handoff) Lease() time.Duration { return 30 * time.Second }
func (h *handoff) Hand(_ context.Context, evs []domain.Event) int {
	h.got = append(h.got, evs...)
	return len(evs)
}

// run writes through n's Changed or Received in a transaction of st seen
// with the Twilio rows, and runs the After once it committed.
func run(t *testing.T, st *trackingtest.Store, rows tx, fn func(tx Tx) (tracking.After, error)) {
	t.Helper()
	var after tracking.After
	if err := st.Write(context.Background(), func(t *trackingtest.Tx) error {
		rows.Tx = t
		var err error
		after, err = fn(rows)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if after != nil {
		after(context.Background())
	}
}

func twilioMsg(acc, callback string, status domain.Status) domain.Message {
	return domain.Message{ID: id.New(id.Message, t0), AccountID: acc, Env: domain.Live, To: "5511999990010", From: "15005550006",
		Type: domain.SMS, Channel: domain.SMS, Status: status, Provider: "sim", CreatedAt: t0,
		Content: domain.Content{Twilio: &domain.TwilioOrigin{AccountSid: ac1, StatusCallback: callback}}}
}

func form(t *testing.T, body string) url.Values {
	t.Helper()
	f, err := url.ParseQuery(body)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// Every step of a message with a StatusCallback is a status callback with
// Twilio's parameters, in order, leased to the local worker and handed to
// it after the commit; a message without one, or sent through another
// front, gets none. A failed step carries Twilio's error code.
func TestStatusCallbacks(t *testing.T) {
	h := &handoff{}
	c := &Callbacks{Handoff: h}
	st := &trackingtest.Store{}
	delivered := twilioMsg("acc_1", "https://hooks.example.com/status?x=1", domain.Delivered)
	delivered.ProviderRef = "ref-1"
	failed := twilioMsg("acc_1", "https://hooks.example.com/status", domain.Failed)
	failed.ProviderRef, failed.ErrorCode = "ref-2", domain.CodeUndelivered
	noCallback := twilioMsg("acc_1", "", domain.Delivered)
	native := domain.Message{ID: id.New(id.Message, t0), AccountID: "acc_1", Env: domain.Live, To: "5511999990010",
		Status: domain.Delivered, CallbackURL: "https://hooks.example.com/native"}
	at := t0.Add(time.Minute)
	cs := []tracking.Change{
		{Message: delivered, Was: domain.Sending, Steps: []domain.Status{domain.Sent, domain.Delivered}, At: at, Recorded: at},
		{Message: noCallback, Was: domain.Sent, Steps: []domain.Status{domain.Delivered}, At: at, Recorded: at},
		{Message: native, Was: domain.Sent, Steps: []domain.Status{domain.Delivered}, At: at, Recorded: at},
		{Message: failed, Was: domain.Sent, Steps: []domain.Status{domain.Failed}, At: at, Recorded: at},
	}
	run(t, st, tx{}, func(tx Tx) (tracking.After, error) { return c.Changed(context.Background(), tx, cs) })
	evs := st.Rows().Events
	if len(evs) != 3 {
		t.Fatalf("%d events, want 3: two steps of the delivered message and the failure", len(evs))
	}
	want := []struct {
		msg          domain.Message
		status, code string
	}{
		{delivered, "sent", ""}, {delivered, "delivered", ""}, {failed, "undelivered", "30003"},
	}
	for i, w := range want {
		ev := evs[i]
		if ev.Event != domain.EventTwilioStatus || ev.URL != w.msg.Content.Twilio.StatusCallback || ev.MessageID != w.msg.ID ||
			ev.AccountID != "acc_1" || ev.Env != domain.Live || ev.LeaseOwner != "node-1" || !ev.NextAttemptAt.Equal(at.Add(30*time.Second)) {
			t.Fatalf("event %d: %+v", i, ev)
		}
		f := form(t, ev.Body)
		msid := sid.FromNative(sid.Message, w.msg.ID)
		if msid == "" || f.Get("MessageSid") != msid || f.Get("SmsSid") != msid || f.Get("AccountSid") != ac1 ||
			f.Get("From") != "+15005550006" || f.Get("To") != "+5511999990010" || f.Get("MessageStatus") != w.status ||
			f.Get("SmsStatus") != w.status || f.Get("ApiVersion") != "2010-04-01" || f.Get("ErrorCode") != w.code {
			t.Fatalf("event %d: body %v, want status %s, code %q", i, f, w.status, w.code)
		}
		if _, ok := f["ErrorCode"]; ok != (w.code != "") {
			t.Fatalf("event %d: ErrorCode present %v", i, ok)
		}
	}
	if len(h.got) != 3 {
		t.Fatalf("handed %d events to the local worker, want 3", len(h.got))
	}
}

// Without a local worker the events are written due at once and the
// worker is woken to claim them; events InsertEvents held behind an
// earlier one of their message are not handed over, and wake the worker.
func TestStatusCallbacksWithoutHandoff(t *testing.T) {
	woken := 0
	c := &Callbacks{Wake: func() { woken++ }, OwnSender: func(p string) string { return map[string]string{"sim": "4930123456"}[p] }}
	st := &trackingtest.Store{}
	m := twilioMsg("acc_1", "https://hooks.example.com/status", domain.Sent)
	m.From = ""
	cs := []tracking.Change{{Message: m, Was: domain.Sending, Steps: []domain.Status{domain.Sent}, At: t0, Recorded: t0}}
	run(t, st, tx{}, func(tx Tx) (tracking.After, error) { return c.Changed(context.Background(), tx, cs) })
	evs := st.Rows().Events
	if len(evs) != 1 || evs[0].LeaseOwner != "" || !evs[0].NextAttemptAt.Equal(t0) || woken != 1 {
		t.Fatalf("events %+v, woken %d", evs, woken)
	}
	if f := form(t, evs[0].Body); f.Get("From") != "+4930123456" {
		t.Fatalf("From %q, want the route's own sender", f.Get("From"))
	}

	h := &handoff{}
	held := &Callbacks{Handoff: h, Wake: func() { woken++ }}
	hold := holding{}
	run(t, st, tx{}, func(t Tx) (tracking.After, error) {
		return held.Changed(context.Background(), hold.wrap(t), cs)
	})
	if len(h.got) != 0 || woken != 2 {
		t.Fatalf("handed %d events, woken %d: an event held behind another must be claimed", len(h.got), woken)
	}
}

// holding is a transaction whose InsertEvents holds every event behind an
// earlier one of its message, as the store does.
type holding struct{}

func (holding) wrap(t Tx) Tx { return holdTx{t} }

type holdTx struct{ Tx }

func (h holdTx) InsertEvents(ctx context.Context, evs []domain.Event) error {
	for i := range evs {
		evs[i].LeaseOwner, evs[i].NextAttemptAt = "", evs[i].CreatedAt
	}
	return h.Tx.InsertEvents(ctx, evs)
}

// A reply to one of the account's numbers with an SmsUrl is posted there
// with Twilio's parameters, signed by the account SID of the reply's
// environment; GET is marked on the event's URL. No post for a number
// without an SmsUrl, another account's number, an account with no
// account SID in that environment, or a WhatsApp reply.
func TestInboundPosts(t *testing.T) {
	rows := tx{
		numbers: map[string]domain.TwilioNumber{
			"acc_1/15005550006": {AccountID: "acc_1", Phone: "15005550006", SmsURL: "https://hooks.example.com/sms", SmsMethod: "POST"},
			"acc_1/15005550007": {AccountID: "acc_1", Phone: "15005550007", SmsURL: "https://hooks.example.com/get?k=v", SmsMethod: "GET"},
			"acc_1/15005550008": {AccountID: "acc_1", Phone: "15005550008"},
			"acc_2/15005550009": {AccountID: "acc_2", Phone: "15005550009", SmsURL: "https://acc2.example.com/sms"},
		},
		sids: map[string]domain.TwilioCredential{
			"acc_1/live": {Sid: ac1, Kind: domain.TwilioAccountSid, AccountID: "acc_1", Env: domain.Live},
			"acc_2/test": {Sid: ac2, Kind: domain.TwilioAccountSid, AccountID: "acc_2", Env: domain.Test},
		},
	}
	reply := func(acc, to string, ch domain.Channel) tracking.Reply {
		return tracking.Reply{Inbound: domain.Inbound{ID: id.New(id.Inbound, t0), AccountID: acc, Env: domain.Live, Phone: "5511999990010",
			Channel: ch, Body: "yes & more"}, To: to, At: t0, Recorded: t0}
	}
	answer := func(acc, from string) tracking.Reply {
		r := reply("acc_1", "", domain.SMS)
		r.Answers = domain.Message{ID: id.New(id.Message, t0), AccountID: acc, From: from}
		return r
	}
	cases := []struct {
		name  string
		reply tracking.Reply
		url   string
	}{
		{"POST", reply("acc_1", "15005550006", domain.SMS), "https://hooks.example.com/sms"},
		{"GET", reply("acc_1", "15005550007", domain.SMS), webhook.MethodURL("GET", "https://hooks.example.com/get?k=v")},
		{"no SmsUrl", reply("acc_1", "15005550008", domain.SMS), ""},
		{"another account's number", reply("acc_1", "15005550009", domain.SMS), ""},
		{"no account SID in the environment", reply("acc_2", "15005550009", domain.SMS), ""},
		{"unknown number", reply("acc_1", "15005550010", domain.SMS), ""},
		{"no number written to", reply("acc_1", "", domain.SMS), ""},
		{"an answer to a message from the number", answer("acc_1", "15005550006"), "https://hooks.example.com/sms"},
		{"an answer to another account's message", answer("acc_2", "15005550006"), ""},
		{"WhatsApp", reply("acc_1", "15005550006", domain.WhatsApp), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := &handoff{}
			c := &Callbacks{Handoff: h}
			st := &trackingtest.Store{}
			run(t, st, rows, func(tx Tx) (tracking.After, error) { return c.Received(context.Background(), tx, tc.reply) })
			evs := st.Rows().Events
			if tc.url == "" {
				if len(evs) != 0 || len(h.got) != 0 {
					t.Fatalf("events %+v, want none", evs)
				}
				return
			}
			if len(evs) != 1 || len(h.got) != 1 {
				t.Fatalf("%d events, %d handed; want one", len(evs), len(h.got))
			}
			ev := evs[0]
			if ev.Event != domain.EventTwilioInbound || ev.URL != tc.url || ev.AccountID != "acc_1" || ev.Env != domain.Live ||
				ev.MessageID != "" {
				t.Fatalf("event %+v", ev)
			}
			f := form(t, ev.Body)
			msid := sid.FromNative(sid.Message, tc.reply.Inbound.ID)
			if msid == "" || f.Get("MessageSid") != msid || f.Get("SmsSid") != msid || f.Get("SmsMessageSid") != msid ||
				f.Get("AccountSid") != ac1 || f.Get("From") != "+5511999990010" || f.Get("To") != "+"+cmp.Or(tc.reply.To, tc.reply.Answers.From) ||
				f.Get("Body") != "yes & more" || f.Get("NumMedia") != "0" || f.Get("NumSegments") != "1" || f.Get("ApiVersion") != "2010-04-01" {
				t.Fatalf("body %v", f)
			}
		})
	}
}

// Numbers are written as Twilio writes them: "+" before an international
// number, a short code or an alphanumeric sender as it is.
func TestNumber(t *testing.T) {
	for in, want := range map[string]string{"5511999990010": "+5511999990010", "12345": "12345", "MSGSVC": "MSGSVC",
		"": "", "+5511999990010": "+5511999990010", "0301234567": "0301234567"} {
		if got := Number(in); got != want {
			t.Errorf("Number(%q) = %q, want %q", in, got, want)
		}
	}
}
