package app

import (
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/polltest"
)

// Findings of a hostile black-box test of the API, each proved fixed.

// Test and live are separate worlds inside one account: ids of the other
// environment answer 404 everywhere.
func TestEnvironmentsAreSeparate(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		e := newEnv(t, dialect, envOptions{})
		for _, c := range []struct{ owner, other, name string }{
			{e.liveKey, e.testKey, "live message, test key"},
			{e.testKey, e.liveKey, "test message, live key"},
		} {
			r := send(t, e, c.owner, map[string]any{"to": "5511999990010", "message": "hi", "type": "SMS"})
			if r.status != 202 {
				t.Fatalf("%s: send %d %s", c.name, r.status, r.body)
			}
			body := r.json(t)
			cid := body["campaignId"].(string)
			mid := body["messages"].([]any)[0].(map[string]any)["messageId"].(string)
			for _, req := range []struct{ method, path string }{
				{"GET", "/api/v1/integration/messages/" + mid},
				{"POST", "/api/v1/integration/messages/" + mid + "/cancel"},
				{"GET", "/api/v1/integration/campaigns/" + cid},
				{"POST", "/api/v1/integration/campaigns/" + cid + "/cancel"},
			} {
				got := e.do(req.method, req.path, c.other, nil)
				if got.status != 404 || got.json(t)["code"] != "NOT_FOUND" {
					t.Errorf("%s: %s %s answered %d %s, want 404 NOT_FOUND", c.name, req.method, req.path, got.status, got.body)
				}
			}
			if got := e.do("GET", "/api/v1/integration/messages/"+mid, c.owner, nil); got.status != 200 {
				t.Errorf("%s: the owner's own key got %d", c.name, got.status)
			}
			// Lists and the events feed: the owner's environment sees the
			// message and its events, the other sees neither.
			polltest.For(t, c.name+": events in the owner's feed", 10*time.Second, func() bool {
				evs, _ := readFeed(t, e, c.owner, "", 1000)
				return len(eventsOf(evs, mid, "")) > 0
			})
			if evs, _ := readFeed(t, e, c.other, "", 1000); len(eventsOf(evs, mid, "")) > 0 {
				t.Errorf("%s: the other environment's feed shows its events", c.name)
			}
			for _, q := range []string{"", "?campaignId=" + cid, "?to=5511999990010"} {
				own := e.do("GET", "/api/v1/integration/messages"+q, c.owner, nil)
				other := e.do("GET", "/api/v1/integration/messages"+q, c.other, nil)
				if !strings.Contains(string(own.body), mid) || own.status != 200 {
					t.Errorf("%s: the owner's list%s lacks the message: %d %s", c.name, q, own.status, own.body)
				}
				if strings.Contains(string(other.body), mid) || other.status != 200 {
					t.Errorf("%s: the other environment's list%s: %d %s", c.name, q, other.status, other.body)
				}
			}
		}
	})
}

// A text of whitespace only is refused by the send, naming the field, and
// newline and tab are text. What the decoder refuses is internal/api's
// TestSendDecoding.
func TestStrictBodies(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	r := e.do("POST", "/api/v1/integration/messages", e.testKey, `{"to":"5511999990010","message":" \n\t ","type":"SMS"}`)
	if p := r.json(t); r.status != 400 || p["code"] != "VALIDATION_ERROR" || !strings.Contains(strings.Join(fieldsOf(t, r), " "), "message") {
		t.Errorf("whitespace only: %d %s, want 400 VALIDATION_ERROR naming message", r.status, r.body)
	}
	ok := e.do("POST", "/api/v1/integration/messages", e.testKey, `{"to":"5511999990010","message":"a\n\tb","type":"SMS"}`)
	if ok.status != 202 {
		t.Fatalf("newline and tab refused: %d %s", ok.status, ok.body)
	}
}
