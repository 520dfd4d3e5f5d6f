package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/config"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/media/mediatest"
	"github.com/msgsvc/msgsvc/internal/polltest"
	"github.com/msgsvc/msgsvc/internal/provider/rbm/rbmtest"
)

const (
	rbmAgent = "acme-agent"
	rbmToken = "rbm-client-token-for-tests"
)

// newRBMEnv runs a node whose live RCS goes to a fake RBM platform through
// a configuration file; SMS stays on the simulator (dev), so fallbacks
// can be seen to arrive.
func newRBMEnv(t *testing.T, dialect string) (*env, *rbmtest.Platform) {
	t.Helper()
	p := rbmtest.New(t, rbmAgent)
	f := newConfigFile(t, "")
	key := f.beside("service-account.json", p.Credentials())
	f.write(fmt.Sprintf("providers:\n  - name: rbm\n    type: rbm\n    rbm: {agentId: %s, credentials: %q, apiUrl: %q, clientToken: %s, fallbackAfter: 1m}\n"+
		"routes:\n  - {channel: RCS, primary: rbm}\n", rbmAgent, key, p.APIURL(), rbmToken))
	return newEnv(t, dialect, envOptions{config: func(c *config.Config) { c.Config = f.path }}), p
}

// notify posts a signed notification to the RBM webhook, as the platform
// does.
func (e *env) notify(event any) response {
	e.t.Helper()
	n := rbmtest.Notify(rbmToken, event)
	return e.do("POST", "/providers/rbm/webhook", "", n.Body, "X-Goog-Signature", n.Signature)
}

// sentTo waits for the platform to hold a message to phone and returns it.
func sentTo(t *testing.T, p *rbmtest.Platform, phone string) rbmtest.Message {
	t.Helper()
	var got rbmtest.Message
	polltest.For(t, "the platform to get a message to "+phone, 10*time.Second, func() bool {
		for _, m := range p.Messages() {
			if m.Phone == "+"+phone {
				got = m
				return true
			}
		}
		return false
	})
	return got
}

// hooksOf returns the webhooks received for a message: status → provider.
func hooksOf(e *env, mid string) map[string]string {
	out := map[string]string{}
	for _, h := range e.hooks.all() {
		if h.payload["messageId"] == mid {
			out[h.payload["status"].(string)], _ = h.payload["provider"].(string)
		}
	}
	return out
}

// A live RCS send reaches the platform in RBM's shape (with our uploaded
// file), and the platform's signed DELIVERED, READ and a reply come out as
// signed webhooks to the integrator; an unsigned call records nothing.
func TestLiveRCSOverRBM(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e, p := newRBMEnv(t, d)
		const phone = "5511999990012"
		up := e.uploadMedia(e.liveKey, "shoe.png", "image/png", mediatest.PNG())
		if up.status != 201 {
			t.Fatalf("upload %d %s", up.status, up.body)
		}
		r := send(t, e, e.liveKey, map[string]any{"to": phone, "type": "RCS", "message": "New arrivals", "callbackUrl": e.hooks.url(),
			"media":   map[string]any{"mediaId": up.json(t)["mediaId"]},
			"buttons": []any{map[string]any{"type": "reply", "title": "More", "payload": "more-shoes"}}})
		if r.status != 202 {
			t.Fatalf("send %d %s", r.status, r.body)
		}
		cid := r.json(t)["campaignId"].(string)
		mid := r.json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string)
		m := sentTo(t, p, phone)
		var body struct {
			ContentMessage struct {
				RichCard struct {
					StandaloneCard struct {
						CardContent struct {
							Description string
							Media       struct{ UploadedRbmFile struct{ FileName string } }
						}
					}
				}
			}
		}
		if err := json.Unmarshal(m.Body, &body); err != nil {
			t.Fatal(err)
		}
		card := body.ContentMessage.RichCard.StandaloneCard.CardContent
		file := p.Files()[card.Media.UploadedRbmFile.FileName]
		if card.Description != "New arrivals" || !bytes.Equal(file.Data, mediatest.PNG()) || file.ContentType != "image/png" {
			t.Fatalf("the platform got %s and file %q", m.Body, file.Name)
		}
		polltest.For(t, "SENT", 10*time.Second, func() bool { return hooksOf(e, mid)["SENT"] == "rbm" })
		for _, ev := range []string{"DELIVERED", "READ"} {
			if r := e.notify(rbmtest.UserEvent(phone, rbmAgent, m.ID, ev)); r.status != 200 {
				t.Fatalf("%s: %d %s", ev, r.status, r.body)
			}
		}
		polltest.For(t, "DELIVERED and READ", 10*time.Second, func() bool { return len(hooksOf(e, mid)) == 3 })
		if got := hooksOf(e, mid); got["DELIVERED"] != "rbm" || got["READ"] != "rbm" {
			t.Fatalf("webhooks %v", got)
		}
		if r := e.notify(rbmtest.UserText(phone, rbmAgent, "Do you have size 44?")); r.status != 200 {
			t.Fatalf("reply: %d %s", r.status, r.body)
		}
		if p := e.hooks.first("the reply", isReply); p["message"] != "Do you have size 44?" || p["channel"] != "RCS" || p["campaignId"] != cid ||
			p["phone"] != phone {
			t.Fatalf("reply webhook %v", p)
		}
		feed := func() time.Time {
			last, err := e.st.LastInbound(context.Background(), e.account.ID, domain.Live, phone, domain.RCS)
			if err != nil {
				t.Fatal(err)
			}
			return last
		}
		before := feed()
		bad := rbmtest.Notify("a-guessed-token", rbmtest.UserText(phone, rbmAgent, "forged"))
		if r := e.do("POST", "/providers/rbm/webhook", "", bad.Body, "X-Goog-Signature", bad.Signature); r.status != 401 ||
			problemCode(t, r) != "INVALID_SIGNATURE" {
			t.Fatalf("forged: %d %s", r.status, r.body)
		}
		if r := e.do("POST", "/providers/rbm/webhook", "", bad.Body); r.status != 401 {
			t.Fatalf("unsigned: %d", r.status)
		}
		if after := feed(); !after.Equal(before) {
			t.Fatalf("a refused call recorded a reply: last at %v, then %v", before, after)
		}
		if r := e.do("POST", "/providers/rbm/webhook", "", `{"clientToken":"`+rbmToken+`","secret":"42"}`); r.status != 200 || string(r.body) != "42" {
			t.Fatalf("validation: %d %s", r.status, r.body)
		}
		ready := e.mg("GET", "/readyz", e.member("operator"), nil).json(t) // details are for operators
		if s, _ := ready["provider:rbm"].(string); !strings.HasPrefix(s, "ok: credentials accepted") {
			t.Fatalf("readyz %v", ready)
		}
		metrics := string(e.do("GET", "/metrics", "", nil).body)
		if !strings.Contains(metrics, `rbm_requests_total{operation="send",outcome="ok",provider="rbm"} 1`) ||
			!strings.Contains(metrics, `rbm_up{provider="rbm"} 1`) {
			t.Fatalf("metrics lack the RBM counters")
		}
	})
}

// An RCS send with an SMS fallback goes out as SMS when the platform says
// the phone has no RCS (capability 404), and when it is still undelivered
// a minute (fallbackAfter) after the platform took it: then it is taken
// back first, so that the phone never gets both.
func TestRCSFallbackOverRBM(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e, p := newRBMEnv(t, d)
		const noRCS, offline = "5511999990033", "5511999990044"
		p.NotCapable(noRCS)
		sendRCS := func(to string) string {
			r := send(t, e, e.liveKey, map[string]any{"to": to, "type": "RCS", "message": "Your table is ready", "callbackUrl": e.hooks.url(),
				"fallback": map[string]any{"type": "SMS", "message": "Your table is ready (SMS)"}})
			if r.status != 202 {
				t.Fatalf("send %d %s", r.status, r.body)
			}
			return r.json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string)
		}

		mid := sendRCS(noRCS)
		m := finalStatus(t, e, e.liveKey, mid, "DELIVERED")
		if m["channel"] != "SMS" || m["provider"] != "simulator" {
			t.Fatalf("no-RCS phone: %v", m)
		}
		if checks := p.CapabilityChecks(); len(checks) != 1 || checks[0] != "+"+noRCS {
			t.Fatalf("capability checks %v", checks)
		}
		for _, msg := range p.Messages() {
			if msg.Phone == "+"+noRCS {
				t.Fatal("the platform got a message for a phone without RCS")
			}
		}

		mid = sendRCS(offline)
		rm := sentTo(t, p, offline)
		polltest.For(t, "SENT", 10*time.Second, func() bool { return hooksOf(e, mid)["SENT"] == "rbm" })
		e.clock.Advance(2 * time.Minute)
		m = finalStatus(t, e, e.liveKey, mid, "DELIVERED")
		if m["channel"] != "SMS" || m["provider"] != "simulator" || m["type"] != "RCS" {
			t.Fatalf("undelivered RCS: %v", m)
		}
		if rv := p.Revoked(); len(rv) != 1 || rv[0] != rm.ID {
			t.Fatalf("revoked %v, want %s", rv, rm.ID)
		}
		polltest.For(t, "DELIVERED", 10*time.Second, func() bool { return hooksOf(e, mid)["DELIVERED"] != "" })
		if got := hooksOf(e, mid); len(got) != 2 || got["SENT"] != "rbm" || got["DELIVERED"] != "simulator" {
			t.Fatalf("webhooks %v", got)
		}
		// The platform's late word about the RCS message changes nothing.
		if r := e.notify(rbmtest.UserEvent(offline, rbmAgent, rm.ID, "READ")); r.status != 200 {
			t.Fatalf("late event: %d", r.status)
		}
		if m := e.do("GET", "/api/v1/integration/messages/"+mid, e.liveKey, nil).json(t); m["status"] != "DELIVERED" {
			t.Fatalf("after a late event: %v", m)
		}
	})
}
