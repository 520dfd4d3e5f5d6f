package app

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/provider/twilio"
	"github.com/msgsvc/msgsvc/internal/provider/twilio/twiliotest"
)

const (
	twSID    = "AC0123456789abcdef0123456789abcdef"
	twToken  = "twilio-auth-token-for-tests"
	twPublic = "https://gw.example.com"
	twNumber = "15017122661"
)

// twilioBlock is a Twilio provider named twilio at apiURL.
func twilioBlock(apiURL string) string {
	return fmt.Sprintf(`  - name: twilio
    type: twilio
    twilio:
      accountSid: %s
      authToken: %s
      from: "+%s"
      apiUrl: %s
      publicUrl: %s
`, twSID, twToken, twNumber, apiURL, twPublic)
}

// twilioEnv is a node that sends every SMS through a fake Twilio.
func twilioEnv(t *testing.T, dialect string) (*env, *twiliotest.Server) {
	t.Helper()
	tw := twiliotest.New(t)
	e := newEnv(t, dialect, envOptions{file: "providers:\n" + twilioBlock(tw.URL) +
		"routes:\n  - channel: SMS\n    primary: twilio\n"})
	return e, tw
}

// postTwilio posts a form to a Twilio callback path, signed as Twilio
// signs it over the public URL with token ("" for unsigned).
func (e *env) postTwilio(path string, form url.Values, token string) response {
	e.t.Helper()
	var h []string
	if token != "" {
		h = []string{"X-Twilio-Signature", twilio.Sign(token, twPublic+path, form)}
	}
	return e.do("POST", path, "", form.Encode(), append(h, "Content-Type", "application/x-www-form-urlencoded")...)
}

// A live SMS routed to Twilio goes out through its Messages API, and
// Twilio's signed status callback makes it DELIVERED, with the webhook to
// the integrator; forged or unsigned callbacks change nothing.
func TestLiveSMSThroughTwilio(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e, tw := twilioEnv(t, d)
		ctx := context.Background()
		mid := msgID(t, send(t, e, e.liveKey, map[string]any{"to": "5511999990042", "message": "Your code is 482913", "type": "SMS",
			"callbackUrl": e.hooks.url()}), 0)
		finalStatus(t, e, e.liveKey, mid, "SENT")
		m, err := e.st.MessageByID(ctx, mid)
		if err != nil {
			t.Fatal(err)
		}
		sends := tw.Sends()
		if len(sends) != 1 || sends[0].Get("To") != "+5511999990042" || sends[0].Get("Body") != "Your code is 482913" ||
			sends[0].Get("StatusCallback") != twPublic+twilio.StatusPath || m.Provider != "twilio" || m.ProviderRef == "" {
			t.Fatalf("Twilio got %v; message %+v", sends, m)
		}
		delivered := url.Values{"MessageSid": {m.ProviderRef}, "MessageStatus": {"delivered"}, "AccountSid": {twSID},
			"To": {"+5511999990042"}, "From": {"+" + twNumber}}
		for _, token := range []string{"", "not the auth token"} {
			if r := e.postTwilio(twilio.StatusPath, delivered, token); r.status != 401 {
				t.Fatalf("callback signed with %q: %d %s", token, r.status, r.body)
			}
		}
		if m, _ := e.st.MessageByID(ctx, mid); m.Status != domain.Sent {
			t.Fatalf("a forged callback moved the message to %s", m.Status)
		}
		if r := e.postTwilio(twilio.StatusPath, delivered, twToken); r.status != 204 {
			t.Fatalf("signed callback: %d %s", r.status, r.body)
		}
		checkEnded(ctx, t, e, mid, domain.Delivered, "", "twilio", []string{"SENT", "DELIVERED"})
	})
}

// An SMS route whose SMPP carrier is down fails over to Twilio.
func TestSMPPFailsOverToTwilio(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		tw := twiliotest.New(t)
		e := newEnv(t, d, envOptions{poll: 20 * time.Millisecond, file: "providers:\n" + impatientSMPP("carrier", downSMSC(t), 1) + twilioBlock(tw.URL) + `routes:
  - channel: SMS
    primary: carrier
    secondary: twilio
`})
		ctx := context.Background()
		ids := sendIDs(t, e, map[string]any{"recipients": []string{"5511999990051", "5511999990052"}, "message": "failover",
			"type": "SMS", "callbackUrl": e.hooks.url()})
		untilSent(t, e, ids)
		for _, id := range ids {
			m, err := e.st.MessageByID(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if r := e.postTwilio(twilio.StatusPath, url.Values{"MessageSid": {m.ProviderRef}, "MessageStatus": {"delivered"}}, twToken); r.status != 204 {
				t.Fatalf("status callback: %d %s", r.status, r.body)
			}
		}
		for _, id := range ids {
			checkEnded(ctx, t, e, id, domain.Delivered, "", "twilio", []string{"SENT", "DELIVERED"})
		}
		if got := tw.Sends(); len(got) != 2 {
			t.Errorf("Twilio got %d sends, want 2", len(got))
		}
	})
}

// untilSent makes each scheduled retry due until every message is SENT.
func untilSent(t *testing.T, e *env, ids []string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !allStatus(t, e, ids, domain.Sent); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the messages were not SENT within 30 s")
		}
		now := e.clock.Now()
		for _, id := range ids {
			m, err := e.st.MessageByID(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			if m.Status == domain.Sending && m.LeaseOwner == "" && m.NextAttemptAt.After(now) {
				e.clock.Advance(m.NextAttemptAt.Sub(now) + time.Millisecond)
				break
			}
		}
	}
}

// downSMSC is the address of an SMSC that is not running.
func downSMSC(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// An SMS to the account's Twilio number reaches that account (its sender),
// and no other; an unsigned one is refused and recorded nowhere.
func TestInboundSMSThroughTwilio(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e, _ := twilioEnv(t, d)
		ctx := context.Background()
		now := e.clock.Now()
		other, err := CreateAccount(ctx, e.st, NewAccount{Name: "Other", Tier: "enterprise", Credits: 10, Currency: "USD", Country: "55"}, now)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.st.AddSender(ctx, domain.Sender{ID: id.New(id.Sender, now), AccountID: e.account.ID, Channel: domain.SMS,
			Value: twNumber, Status: domain.SenderApproved, CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
		const phone = "5511999990061"
		in := url.Values{"MessageSid": {"SMinbound0001"}, "From": {"+" + phone}, "To": {"+" + twNumber}, "Body": {"Hello there"},
			"NumMedia": {"0"}, "AccountSid": {twSID}}
		if r := e.postTwilio(twilio.InboundPath, in, ""); r.status != 401 {
			t.Fatalf("unsigned inbound: %d %s", r.status, r.body)
		}
		if at := lastSMSFrom(t, e, e.account.ID, phone); !at.IsZero() {
			t.Fatal("an unsigned inbound was recorded")
		}
		for range 2 { // Twilio may deliver it again: recorded once
			if r := e.postTwilio(twilio.InboundPath, in, twToken); r.status != 200 {
				t.Fatalf("inbound: %d %s", r.status, r.body)
			}
		}
		if at := lastSMSFrom(t, e, e.account.ID, phone); at.IsZero() {
			t.Fatal("the inbound SMS did not reach the account holding the number")
		}
		if at := lastSMSFrom(t, e, other.ID, phone); !at.IsZero() {
			t.Fatal("the inbound SMS reached another account")
		}
		if s := e.do("GET", "/api/v1/integration/messages", e.liveKey, nil); slices.Contains([]int{500, 502}, s.status) {
			t.Fatalf("listing after an inbound: %d", s.status)
		}
	})
}

func lastSMSFrom(t *testing.T, e *env, accountID, phone string) time.Time {
	t.Helper()
	at, err := e.st.LastInbound(context.Background(), accountID, domain.Live, phone, domain.SMS)
	if err != nil {
		t.Fatal(err)
	}
	return at
}
