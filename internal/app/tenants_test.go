package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/media/mediatest"
	"github.com/msgsvc/msgsvc/internal/nodetest"
	"github.com/msgsvc/msgsvc/internal/polltest"
)

// Every endpoint of the integration API, walked with another account's ids
// and keys and with the other environment's key, answers 404 (or a
// refusal), never the other's data.
func TestTenantsAreIsolated(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		other := e.addAccount(NewAccount{Name: "Other", Tier: "enterprise", Credits: 50, Currency: "EUR", Country: "44"})
		otk, _ := e.addKey(other.ID, "test")
		olk, _ := e.addKey(other.ID, "live")
		// The first account's live message, campaign and upload.
		r := send(t, e, e.liveKey, map[string]any{"to": "5511999990010", "message": "private", "type": "SMS", "reference": "secret-ref"})
		body := r.json(t)
		cid := body["campaignId"].(string)
		mid := body["messages"].([]any)[0].(map[string]any)["messageId"].(string)
		up := e.uploadMedia(e.liveKey, "a.png", "image/png", mediatest.PNG()).json(t)
		medID := up["mediaId"].(string)

		paths := []struct{ method, path string }{
			{"GET", "/api/v1/integration/messages/" + mid},
			{"POST", "/api/v1/integration/messages/" + mid + "/cancel"},
			{"GET", "/api/v1/integration/campaigns/" + cid},
			{"POST", "/api/v1/integration/campaigns/" + cid + "/cancel"},
			{"POST", "/api/v1/integration/messages/" + mid + "/redact"},
		}
		for _, key := range []struct{ name, key string }{{"other account's test key", otk.Secret},
			{"other account's live key", olk.Secret}, {"own test key", e.testKey}} {
			for _, p := range paths {
				got := e.do(p.method, p.path, key.key, nil)
				if got.status != 404 || strings.Contains(string(got.body), "secret-ref") {
					t.Errorf("%s: %s %s answered %d %s", key.name, p.method, p.path, got.status, got.body)
				}
			}
			// Another account's upload cannot be sent (uploads belong to the
			// account, both environments).
			if key.key != e.testKey {
				s := send(t, e, key.key, map[string]any{"to": "5511999990010", "message": "x", "type": "RCS",
					"media": map[string]any{"mediaId": medID}})
				if f := fieldsOf(t, s); s.status != 400 || len(f) != 1 || f[0] != "media.mediaId" {
					t.Errorf("%s sending the first account's upload: %d %s", key.name, s.status, s.body)
				}
			}
			// Lists and the feed show nothing of the first account.
			for _, q := range []string{"", "?campaignId=" + cid, "?reference=secret-ref", "?to=5511999990010"} {
				if got := e.do("GET", "/api/v1/integration/messages"+q, key.key, nil); got.status != 200 ||
					strings.Contains(string(got.body), mid) || strings.Contains(string(got.body), "secret-ref") {
					t.Errorf("%s: list%s answered %d %s", key.name, q, got.status, got.body)
				}
			}
			if evs, _ := readFeed(t, e, key.key, "", 1000); len(eventsOf(evs, mid, "")) > 0 {
				t.Errorf("%s: the events feed shows the first account's events", key.name)
			}
			// What an account reads of itself is its own.
			if b := e.do("GET", "/api/v1/integration/balance", key.key, nil).json(t); key.key != e.testKey && b["currency"] != "EUR" {
				t.Errorf("%s: balance %v is not its own", key.name, b)
			}
		}
		if m := e.do("GET", "/api/v1/integration/messages/"+mid, e.liveKey, nil); m.status != 200 || m.json(t)["to"] != "5511999990010" {
			t.Fatalf("the owner's own read: %d %s", m.status, m.body)
		}
		// Opt-outs are the account's and the environment's own.
		reply(t, e, domain.Live, "5511999990010", "STOP", domain.SMS)
		for _, key := range []string{otk.Secret, olk.Secret, e.testKey} {
			if l := e.do("GET", "/api/v1/integration/opt-outs", key, nil); l.status != 200 || strings.Contains(string(l.body), "5511999990010") {
				t.Errorf("another account's or environment's opt-out list: %d %s", l.status, l.body)
			}
		}
		// The owner's feed has the events the others' lacked (so the walk
		// above proved something).
		polltest.For(t, "the owner's events", 10*time.Second, func() bool {
			evs, _ := readFeed(t, e, e.liveKey, "", 1000)
			return len(eventsOf(evs, mid, "")) == 2
		})
		for _, key := range []string{otk.Secret, olk.Secret, e.testKey} {
			if evs, _ := readFeed(t, e, key, "", 1000); len(eventsOf(evs, mid, "")) > 0 {
				t.Error("another key's feed shows the first account's events")
			}
		}
	})
}

// A full run logs no key, signing secret, password or session token.
func TestLogsHoldNoSecrets(t *testing.T) {
	var buf nodetest.Buffer
	e := newEnv(t, "sqlite", envOptions{log: &buf, retrySchedule: "20ms,20ms"})
	ctx := context.Background()
	_, password, err := createTestUser(ctx, e.st, e.account.ID, "ops@acme.example", "owner", "", e.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	login := e.do("POST", "/api/v1/auth/login", "", map[string]any{"email": "ops@acme.example", "password": password}).json(t)
	token, _ := login["token"].(string)
	e.do("POST", "/api/v1/auth/login", "", map[string]any{"email": "ops@acme.example", "password": password + "x"})
	e.hooks.set(func(r *receiver) { r.failNext = 2 })
	for _, to := range []string{"5511999990010", "5511999990001", "5511999990002"} {
		send(t, e, e.testKey, map[string]any{"to": to, "message": "hi", "type": "SMS", "callbackUrl": e.hooks.url() + "?token=cb-secret"})
	}
	e.do("GET", "/api/v1/integration/balance", "svc_live_"+strings.Repeat("Z", 40), nil) // a wrong key
	polltest.For(t, "webhooks", 10*time.Second, func() bool { return len(e.hooks.all()) >= 4 })
	e.stop()
	logs := buf.String()
	if len(logs) == 0 {
		t.Fatal("nothing was logged: the test would prove nothing")
	}
	for name, secret := range map[string]string{"test key": e.testKey, "live key": e.liveKey, "wrong key": strings.Repeat("Z", 40),
		"webhook secret": e.account.WebhookSecret, "password": password, "session token": token, "callback token": "cb-secret"} {
		if secret != "" && strings.Contains(logs, secret) {
			t.Errorf("the logs show the %s", name)
		}
	}
	if strings.Contains(logs, "whsec_") {
		t.Error("the logs show a signing secret")
	}
}
