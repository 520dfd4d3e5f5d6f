package app

import (
	"strings"
	"testing"
	"time"
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
			waitFor(t, c.name+": events in the owner's feed", 10*time.Second, func() bool {
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

// Bodies are strict: what encoding/json would quietly accept is refused,
// naming the field, and nothing is sent.
func TestStrictBodies(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	cases := []struct {
		name, body, field string
	}{
		{"duplicate to", `{"to":"5511999990010","to":"5511999990020","message":"hi","type":"SMS"}`, "to"},
		{"duplicate type", `{"to":"5511999990010","message":"hi","type":"SMS","type":"RCS"}`, "type"},
		{"duplicate nested key", `{"to":"5511999990010","message":"hi","type":"WHATSAPP","buttons":[{"type":"reply","title":"a","title":"b","payload":"p"}]}`, "buttons[0].title"},
		{"invalid UTF-8", "{\"to\":\"5511999990010\",\"message\":\"h\xffi\",\"type\":\"SMS\"}", ""},
		{"NUL in the text", `{"to":"5511999990010","message":"a\u0000b","type":"SMS"}`, "message"},
		{"escape in the text", `{"to":"5511999990010","message":"a\u001bb","type":"SMS"}`, "message"},
		{"carriage return", `{"to":"5511999990010","message":"a\rb","type":"SMS"}`, "message"},
		{"whitespace only", `{"to":"5511999990010","message":" \n\t ","type":"SMS"}`, "message"},
	}
	for _, c := range cases {
		r := e.do("POST", "/api/v1/integration/messages", e.testKey, c.body)
		p := r.json(t)
		if r.status != 400 || p["code"] != "VALIDATION_ERROR" {
			t.Errorf("%s: %d %s, want 400 VALIDATION_ERROR", c.name, r.status, r.body)
			continue
		}
		if c.field != "" && !strings.Contains(strings.Join(fieldsOf(t, r), " "), c.field) {
			t.Errorf("%s: errors name %v, want %s", c.name, fieldsOf(t, r), c.field)
		}
	}
	// Newline and tab are text.
	ok := e.do("POST", "/api/v1/integration/messages", e.testKey, `{"to":"5511999990010","message":"a\n\tb","type":"SMS"}`)
	if ok.status != 202 {
		t.Fatalf("newline and tab refused: %d %s", ok.status, ok.body)
	}
}

// Every error is problem+json: wrong methods and unknown paths included.
func TestEveryErrorIsProblemJSON(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	cases := []struct {
		method, path, key string
		status            int
		code, allow       string
	}{
		{"DELETE", "/api/v1/integration/balance", e.testKey, 405, "METHOD_NOT_ALLOWED", "GET, HEAD"},
		{"PUT", "/api/v1/integration/messages", e.testKey, 405, "METHOD_NOT_ALLOWED", "GET, HEAD, POST"},
		{"GET", "/api/v1/integration/messages/msg_x/cancel", e.testKey, 405, "METHOD_NOT_ALLOWED", "POST"},
		{"POST", "/healthz", "", 405, "METHOD_NOT_ALLOWED", "GET, HEAD"},
		{"GET", "/no/such/path", "", 404, "NOT_FOUND", ""},
		{"GET", "/api/v1/integration/nothing-here", "", 401, "MISSING_API_KEY", ""},
		{"GET", "/api/v1/integration/nothing-here", e.testKey, 404, "NOT_FOUND", ""},
	}
	for _, c := range cases {
		r := e.do(c.method, c.path, c.key, nil)
		if ct := r.header.Get("Content-Type"); r.status != c.status || ct != "application/problem+json" {
			t.Errorf("%s %s: %d %q %s, want %d problem+json", c.method, c.path, r.status, ct, r.body, c.status)
			continue
		}
		p := r.json(t)
		if p["code"] != c.code || p["status"] != float64(c.status) || p["requestId"] == nil {
			t.Errorf("%s %s: problem %v, want code %s", c.method, c.path, p, c.code)
		}
		if r.header.Get("Allow") != c.allow {
			t.Errorf("%s %s: Allow %q, want %q", c.method, c.path, r.header.Get("Allow"), c.allow)
		}
	}
}
