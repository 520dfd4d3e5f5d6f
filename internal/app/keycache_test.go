package app

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/nodetest"
)

// secondNode starts another node on e's database, as a second machine of
// the deployment would run: its own process state (key cache, limiter,
// dispatcher), the same rows. It returns the node's base URL.
func secondNode(t *testing.T, e *env) string {
	t.Helper()
	cfg := e.srv.cfg
	cfg.NodeID, cfg.Addr, cfg.DataDir = "test-node-2", "127.0.0.1:0", t.TempDir()
	srv, err := NewServer(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), Options{Now: e.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	nodetest.Run(t, "second node", srv.Run)
	return "http://" + srv.Addr()
}

// TestKeyChangesBiteOnEveryNode: nodes keep the keys they authenticated in
// memory, yet a revocation or a settings change made anywhere (here,
// through the other node's storage, as its management API would) bites on
// the very next request on every node.
func TestKeyChangesBiteOnEveryNode(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		a := newEnv(t, d, envOptions{})
		b := *a // the same account and keys, served by the second node
		b.base = secondNode(t, a)
		b.client = &http.Client{}
		t.Cleanup(b.client.CloseIdleConnections)
		ctx := context.Background()
		const balance = "/api/v1/integration/balance"
		sms := map[string]any{"to": "5511999990000", "message": "hi", "type": "SMS", "from": "Acme"}

		// Warm node B's cache with both keys.
		for _, k := range []string{a.testKey, a.liveKey} {
			if r := b.do("GET", balance, k, nil); r.status != 200 {
				t.Fatalf("node B before any change: %d %s", r.status, r.body)
			}
		}
		if r := b.do("POST", "/api/v1/integration/messages", a.testKey, sms); r.status != 400 {
			t.Fatalf("unapproved sender on node B: %d %s", r.status, r.body)
		}

		steps := []struct {
			name   string
			change func() error
			check  func() response
			ok     func(r response) bool
		}{
			{"allow-list", func() error {
				return a.st.UpdateAccountSettings(ctx, a.account.ID, []string{"192.0.2.1"}, false, 1)
			}, func() response { return b.do("GET", balance, a.testKey, nil) },
				func(r response) bool { return r.status == 403 && r.json(t)["code"] == "IP_NOT_ALLOWED" }},
			{"allow-list lifted", func() error {
				return a.st.UpdateAccountSettings(ctx, a.account.ID, nil, false, 1)
			}, func() response { return b.do("GET", balance, a.testKey, nil) },
				func(r response) bool { return r.status == 200 }},
			{"limits", func() error {
				return a.st.SetLimits(ctx, a.account.ID, domain.Limits{TierRPM: 7})
			}, func() response { return b.do("GET", balance, a.testKey, nil) },
				func(r response) bool { return r.status == 200 && r.header.Get("X-RateLimit-Limit") == "7" }},
			{"sender approved", func() error {
				return a.st.AddSender(ctx, domain.Sender{ID: id.New(id.Sender, time.Now()), AccountID: a.account.ID,
					Channel: domain.SMS, Value: "Acme", CreatedAt: time.Now()})
			}, func() response { return b.do("POST", "/api/v1/integration/messages", a.testKey, sms) },
				func(r response) bool { return r.status == 202 }},
			// A send takes its key from node B's cache without reading the
			// counter for the request; the send's transaction finds the
			// counter moved and the request is authenticated afresh.
			{"allow-list, on a send", func() error {
				return a.st.UpdateAccountSettings(ctx, a.account.ID, []string{"192.0.2.1"}, false, 1)
			}, func() response { return b.do("POST", "/api/v1/integration/messages", a.testKey, sms) },
				func(r response) bool { return r.status == 403 && r.json(t)["code"] == "IP_NOT_ALLOWED" }},
			{"allow-list lifted, on a send", func() error {
				return a.st.UpdateAccountSettings(ctx, a.account.ID, nil, false, 1)
			}, func() response { return b.do("POST", "/api/v1/integration/messages", a.testKey, sms) },
				func(r response) bool { return r.status == 202 }},
			{"the live key read on node B", func() error { return nil },
				func() response { return b.do("GET", balance, a.liveKey, nil) },
				func(r response) bool { return r.status == 200 }},
			{"revocation, on a send", func() error {
				keys, err := a.st.Keys(ctx, a.account.ID)
				if err != nil {
					return err
				}
				for _, k := range keys {
					if k.Env == domain.Live {
						return a.st.RevokeKey(ctx, a.account.ID, k.ID, time.Now())
					}
				}
				t.Fatal("no live key")
				return nil
			}, func() response { return b.do("POST", "/api/v1/integration/messages", a.liveKey, sms) },
				func(r response) bool { return r.status == 401 && r.json(t)["code"] == "INVALID_API_KEY" }},
			{"revocation, on a read", func() error { return nil }, func() response { return b.do("GET", balance, a.liveKey, nil) },
				func(r response) bool { return r.status == 401 && r.json(t)["code"] == "INVALID_API_KEY" }},
		}
		for _, s := range steps {
			if err := s.change(); err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			if r := s.check(); !s.ok(r) {
				t.Fatalf("%s: the next request on node B got %d %s", s.name, r.status, r.body)
			}
		}
		// The refused sends wrote nothing: the live key never sent.
		live, err := a.st.SearchMessages(ctx, domain.MessageFilter{AccountID: a.account.ID, Env: domain.Live})
		if err != nil || len(live) != 0 {
			t.Fatalf("live messages %d (%v), want none", len(live), err)
		}
	})
}
