package callback

import (
	"cmp"
	"context"
	"net/url"
	"reflect"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/api/notify"
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

// feed is the REST front's notifier with the callbacks riding on its
// events, as the node wires them.
func feed(h *handoff, wake func(), c *Callbacks) *notify.Webhooks[Tx] {
	w := &notify.Webhooks[Tx]{Wake: wake, Posts: c}
	if h != nil {
		w.Handoff = h
	}
	return w
}

// run writes through Changed or Received in a transaction of st seen with
// the Twilio rows, and runs the After once it committed.
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

// checkStatusForm fails unless f is the status callback of m's step
// status (Twilio's word), with Twilio's error code when failed.
func checkStatusForm(t *testing.T, f url.Values, m domain.Message, status, code string) {
	t.Helper()
	msid := sid.FromNative(sid.Message, m.ID)
	if msid == "" || f.Get("MessageSid") != msid || f.Get("SmsSid") != msid || f.Get("AccountSid") != ac1 ||
		f.Get("From") != "+15005550006" || f.Get("To") != "+5511999990010" || f.Get("MessageStatus") != status ||
		f.Get("SmsStatus") != status || f.Get("ApiVersion") != "2010-04-01" || f.Get("ErrorCode") != code {
		t.Fatalf("callback %v, want status %s, code %q", f, status, code)
	}
	if _, ok := f["ErrorCode"]; ok != (code != "") {
		t.Fatalf("callback %v: ErrorCode present %v", f, ok)
	}
}

// Every step of a message is one event: the feed's delivery_status, which
// for a message with a StatusCallback also carries the status callback
// with Twilio's parameters, to be posted there, leased to the local worker
// and handed to it after the commit. A message without a StatusCallback,
// or sent through another front, carries none. A failed step carries
// Twilio's error code.
func TestStatusCallbacks(t *testing.T) {
	h := &handoff{}
	w := feed(h, nil, &Callbacks{})
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
		{Message: &delivered, Was: domain.Sending, Steps: []domain.Status{domain.Sent, domain.Delivered}, At: at, Recorded: at},
		{Message: &noCallback, Was: domain.Sent, Steps: []domain.Status{domain.Delivered}, At: at, Recorded: at},
		{Message: &native, Was: domain.Sent, Steps: []domain.Status{domain.Delivered}, At: at, Recorded: at},
		{Message: &failed, Was: domain.Sent, Steps: []domain.Status{domain.Failed}, At: at, Recorded: at},
	}
	run(t, st, tx{}, func(tx Tx) (tracking.After, error) { return w.Changed(context.Background(), tx, cs) })
	evs := st.Rows().Events
	want := []struct {
		msg          domain.Message
		step         domain.Status
		status, code string // the callback's; "" when none
		url          string
	}{
		{delivered, domain.Sent, "sent", "", delivered.Content.Twilio.StatusCallback},
		{delivered, domain.Delivered, "delivered", "", delivered.Content.Twilio.StatusCallback},
		{noCallback, domain.Delivered, "", "", ""},
		{native, domain.Delivered, "", "", native.CallbackURL},
		{failed, domain.Failed, "undelivered", "30003", failed.Content.Twilio.StatusCallback},
	}
	if len(evs) != len(want) {
		t.Fatalf("%d events, want %d: one for each step", len(evs), len(want))
	}
	for i, w := range want {
		ev := evs[i]
		if ev.Event != webhook.DeliveryStatus || ev.URL != w.url || ev.MessageID != w.msg.ID || ev.AccountID != "acc_1" ||
			ev.Env != domain.Live || ev.Body != webhook.StatusBody(w.msg, w.step, at) {
			t.Fatalf("event %d: %+v", i, ev)
		}
		if leased := ev.LeaseOwner == "node-1" && ev.NextAttemptAt.Equal(at.Add(30*time.Second)); leased != (w.url != "") {
			t.Fatalf("event %d: lease %q until %s", i, ev.LeaseOwner, ev.NextAttemptAt)
		}
		if w.status == "" {
			if ev.Form != "" {
				t.Fatalf("event %d: form %q, want none", i, ev.Form)
			}
			continue
		}
		checkStatusForm(t, form(t, ev.Form), w.msg, w.status, w.code)
	}
	// Every webhook is handed to the local worker; the message with two
	// steps as one item, its second behind its first.
	var handed [][]string
	for _, e := range h.got {
		item := []string{e.ID}
		for _, n := range e.Then {
			item = append(item, n.ID)
		}
		handed = append(handed, item)
	}
	if want := [][]string{{evs[0].ID, evs[1].ID}, {evs[3].ID}, {evs[4].ID}}; !reflect.DeepEqual(handed, want) {
		t.Fatalf("handed %q to the local worker, want %q", handed, want)
	}
}

// A message that has both a StatusCallback and a msgsvc callbackUrl (no
// front makes one today) owes two posts per step: the feed's event goes
// to the callbackUrl and the callback gets an event of its own, after it.
func TestStatusCallbackBesideAWebhook(t *testing.T) {
	st := &trackingtest.Store{}
	m := twilioMsg("acc_1", "https://hooks.example.com/status", domain.Delivered)
	m.CallbackURL = "https://hooks.example.com/native"
	cs := []tracking.Change{{Message: &m, Was: domain.Sent, Steps: []domain.Status{domain.Delivered}, At: t0, Recorded: t0}}
	h := &handoff{}
	run(t, st, tx{}, func(tx Tx) (tracking.After, error) {
		return feed(h, nil, &Callbacks{}).Changed(context.Background(), tx, cs)
	})
	evs := st.Rows().Events
	if len(evs) != 2 || evs[0].Event != webhook.DeliveryStatus || evs[0].URL != m.CallbackURL || evs[0].Form != "" ||
		evs[1].Event != domain.EventTwilioStatus || evs[1].URL != m.Content.Twilio.StatusCallback || evs[1].Form != "" ||
		evs[1].MessageID != m.ID {
		t.Fatalf("events %+v", evs)
	}
	checkStatusForm(t, form(t, evs[1].Body), m, "delivered", "")
	if form, ok := webhook.TwilioForm(evs[1]); !ok || form != evs[1].Body {
		t.Fatal("the callback's own event is not posted as Twilio's form")
	}
}

// Without a local worker the events are written due at once and the
// worker is woken to claim them; events InsertEvents held behind an
// earlier one of their message are not handed over, and wake the worker.
func TestStatusCallbacksWithoutHandoff(t *testing.T) {
	woken := 0
	c := &Callbacks{OwnSender: func(p string) string { return map[string]string{"sim": "4930123456"}[p] }}
	st := &trackingtest.Store{}
	m := twilioMsg("acc_1", "https://hooks.example.com/status", domain.Sent)
	m.From = ""
	cs := []tracking.Change{{Message: &m, Was: domain.Sending, Steps: []domain.Status{domain.Sent}, At: t0, Recorded: t0}}
	run(t, st, tx{}, func(tx Tx) (tracking.After, error) {
		return feed(nil, func() { woken++ }, c).Changed(context.Background(), tx, cs)
	})
	evs := st.Rows().Events
	if len(evs) != 1 || evs[0].LeaseOwner != "" || !evs[0].NextAttemptAt.Equal(t0) || woken != 1 {
		t.Fatalf("events %+v, woken %d", evs, woken)
	}
	if f := form(t, evs[0].Form); f.Get("From") != "+4930123456" {
		t.Fatalf("From %q, want the route's own sender", f.Get("From"))
	}

	h := &handoff{}
	held := feed(h, func() { woken++ }, &Callbacks{})
	run(t, st, tx{}, func(t Tx) (tracking.After, error) {
		return held.Changed(context.Background(), holdTx{t}, cs)
	})
	if len(h.got) != 0 || woken != 2 {
		t.Fatalf("handed %d events, woken %d: an event held behind another must be claimed", len(h.got), woken)
	}
}

// holdTx is a transaction whose InsertEvents holds every event behind an
// earlier one of its message, as the store does.
type holdTx struct{ Tx }

func (h holdTx) InsertEvents(ctx context.Context, evs []domain.Event) error {
	for i := range evs {
		evs[i].LeaseOwner, evs[i].NextAttemptAt = "", evs[i].CreatedAt
	}
	return h.Tx.InsertEvents(ctx, evs)
}

// A reply is one event, the feed's message_received; to one of the
// account's numbers with an SmsUrl it also carries the inbound post there
// with Twilio's parameters, signed by the account SID of the reply's
// environment; GET is marked on the event's URL. No post for a number
// without an SmsUrl, another account's number, an account with no account
// SID in that environment, or a WhatsApp reply. A reply that answers a
// campaign sent with a callbackUrl has that webhook and the post as two
// events.
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
	campaign := answer("acc_1", "15005550006")
	campaign.Inbound.CampaignID, campaign.Answers.CampaignID = "cmp_1", "cmp_1"
	campaign.Answers.CallbackURL = "https://hooks.example.com/native"
	cases := []struct {
		name    string
		reply   tracking.Reply
		url     string // the post's; "" when none
		webhook string // the feed event's msgsvc webhook; "" when none
	}{
		{"POST", reply("acc_1", "15005550006", domain.SMS), "https://hooks.example.com/sms", ""},
		{"GET", reply("acc_1", "15005550007", domain.SMS), webhook.MethodURL("GET", "https://hooks.example.com/get?k=v"), ""},
		{"no SmsUrl", reply("acc_1", "15005550008", domain.SMS), "", ""},
		{"another account's number", reply("acc_1", "15005550009", domain.SMS), "", ""},
		{"no account SID in the environment", reply("acc_2", "15005550009", domain.SMS), "", ""},
		{"unknown number", reply("acc_1", "15005550010", domain.SMS), "", ""},
		{"no number written to", reply("acc_1", "", domain.SMS), "", ""},
		{"an answer to a message from the number", answer("acc_1", "15005550006"), "https://hooks.example.com/sms", ""},
		{"an answer to another account's message", answer("acc_2", "15005550006"), "", ""},
		{"WhatsApp", reply("acc_1", "15005550006", domain.WhatsApp), "", ""},
		{"an answer to a campaign with a callbackUrl", campaign, "https://hooks.example.com/sms", campaign.Answers.CallbackURL},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			woken := 0
			st := &trackingtest.Store{}
			run(t, st, rows, func(tx Tx) (tracking.After, error) {
				return feed(&handoff{}, func() { woken++ }, &Callbacks{}).Received(context.Background(), tx, tc.reply)
			})
			evs := st.Rows().Events
			in := tc.reply.Inbound
			if len(evs) == 0 || evs[0].Event != webhook.MessageReceived || evs[0].AccountID != in.AccountID ||
				evs[0].Body != webhook.ReplyBody(in.CampaignID, in.Phone, in.Body, in.Channel, t0) {
				t.Fatalf("events %+v, want the feed's message_received first", evs)
			}
			post := evs[0]
			switch {
			case tc.webhook != "":
				if len(evs) != 2 || evs[0].URL != tc.webhook || evs[0].Form != "" || evs[1].Event != domain.EventTwilioInbound ||
					evs[1].Form != "" {
					t.Fatalf("events %+v, want the webhook and the post's own event", evs)
				}
				post = evs[1]
				post.Form = post.Body
			case len(evs) != 1:
				t.Fatalf("%d events, want one", len(evs))
			}
			if post.URL != tc.url || (tc.url != "") != (woken == 1) {
				t.Fatalf("event %+v, woken %d; want a post to %q", post, woken, tc.url)
			}
			if tc.url == "" {
				if post.Form != "" {
					t.Fatalf("form %q, want none", post.Form)
				}
				return
			}
			if post.AccountID != "acc_1" || post.Env != domain.Live || post.MessageID != "" {
				t.Fatalf("event %+v", post)
			}
			f := form(t, post.Form)
			msid := sid.FromNative(sid.Message, in.ID)
			if msid == "" || f.Get("MessageSid") != msid || f.Get("SmsSid") != msid || f.Get("SmsMessageSid") != msid ||
				f.Get("AccountSid") != ac1 || f.Get("From") != "+5511999990010" || f.Get("To") != "+"+cmp.Or(tc.reply.To, tc.reply.Answers.From) ||
				f.Get("Body") != "yes & more" || f.Get("NumMedia") != "0" || f.Get("NumSegments") != "1" || f.Get("ApiVersion") != "2010-04-01" {
				t.Fatalf("form %v", f)
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
