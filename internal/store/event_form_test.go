package store_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/store"
	"github.com/msgsvc/msgsvc/internal/store/storetest"
	"github.com/msgsvc/msgsvc/internal/webhook"
)

// hashed is a stand-in for the keyed hash retention writes.
func hashed(phone string) string { return "h:" + phone }

var testRedaction = domain.Redaction{Phone: hashed,
	EventBody: func(body string) (string, error) { return webhook.RedactBody(body, hashed) }}

// A step of a message sent through the Twilio-compatible API is one row:
// the feed shows its JSON, the claim hands the worker the Twilio form
// beside it, and a redaction of the message, or of the event, rewrites
// both in the same row.
func TestEventCarriesTwilioForm(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store, _ string) {
		ctx := context.Background()
		acc := newAccount(t, st, 0)
		m := domain.Message{ID: "msg_1", AccountID: acc.ID, Env: domain.Live, To: "5511999990010", Status: domain.Sent}
		status := feedEvent(acc, domain.Live, "evt_1", "https://hooks.example.com/status", t0)
		status.Body = webhook.StatusBody(m, domain.Sent, t0)
		status.Form = url.Values{"MessageSid": {"SM1"}, "To": {"+5511999990010"}, "MessageStatus": {"sent"}}.Encode()
		reply := feedEvent(acc, domain.Live, "evt_2", "https://hooks.example.com/sms", t0)
		reply.MessageID, reply.Event = "", webhook.MessageReceived
		reply.Body = webhook.ReplyBody("", "5511999990010", "my secret", domain.SMS, t0)
		reply.Form = url.Values{"SmsMessageSid": {"SM2"}, "From": {"+5511999990010"}, "Body": {"my secret"}}.Encode()
		write(t, st, func(ctx context.Context, tx *store.Tx) error {
			return tx.InsertEvents(ctx, []domain.Event{status, reply})
		})

		feed, err := st.Feed(ctx, acc.ID, domain.Live, 0, 10)
		if err != nil || len(feed) != 2 || feed[0].ID != "evt_1" || feed[0].Body != status.Body || feed[1].Body != reply.Body {
			t.Fatalf("feed %+v (%v), want both events with their JSON", feed, err)
		}
		claimed, err := st.ClaimEvents(ctx, "node", t0.Add(time.Hour), time.Minute, 10)
		if err != nil || len(claimed) != 2 {
			t.Fatalf("claimed %v (%v)", claimed, err)
		}
		for _, ev := range claimed {
			want := map[string]string{"evt_1": status.Form, "evt_2": reply.Form}[ev.ID]
			if got, ok := webhook.TwilioForm(ev); !ok || got != want {
				t.Errorf("%s posts %q (%v), want %q", ev.ID, got, ok, want)
			}
		}

		write(t, st, func(ctx context.Context, tx *store.Tx) error {
			if err := tx.RedactMessages(ctx, []string{m.ID}, testRedaction); err != nil {
				return err
			}
			return tx.RedactEvents(ctx, []string{"evt_2"}, testRedaction)
		})
		evs, err := st.EventsForMessage(ctx, acc.ID, m.ID)
		if err != nil || len(evs) != 1 {
			t.Fatalf("events of the message %+v (%v)", evs, err)
		}
		if f, _ := url.ParseQuery(evs[0].Form); f.Get("To") != "h:5511999990010" || f.Get("MessageStatus") != "sent" ||
			!strings.Contains(evs[0].Body, `"phone":"h:5511999990010"`) {
			t.Errorf("redacted status event: body %s, form %s", evs[0].Body, evs[0].Form)
		}
		got, err := st.AccountEvent(ctx, acc.ID, "evt_2")
		if err != nil {
			t.Fatal(err)
		}
		if f, _ := url.ParseQuery(got.Form); f.Get("From") != "h:5511999990010" || f.Get("Body") != "" ||
			strings.Contains(got.Body, "secret") || strings.Contains(got.Form, "secret") {
			t.Errorf("redacted reply: body %s, form %s", got.Body, got.Form)
		}
	})
}
