package app

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/polltest"
)

var tsRe = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

// Keys and the allow-list as stored: both keys authenticate, a revoked key
// and an address off the allow-list are refused at once, through the store
// and the key cache. The wire's answers are internal/api's tests.
func TestKeyRevocationAndAllowList(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		for _, k := range []string{e.testKey, e.liveKey} {
			for _, path := range []string{"/api/v1/integration/balance", "/v1/account/balance"} {
				if r := e.do("GET", path, k, nil); r.status != 200 {
					t.Fatalf("%s: %d %s", path, r.status, r.body)
				}
			}
		}

		// Revocation takes effect at once.
		keys, _ := e.st.Keys(context.Background(), e.account.ID)
		for _, k := range keys {
			if k.Env == "live" {
				if err := e.st.RevokeKey(context.Background(), e.account.ID, k.ID, time.Now()); err != nil {
					t.Fatal(err)
				}
			}
		}
		if r := e.do("GET", "/api/v1/integration/balance", e.liveKey, nil); r.status != 401 || r.json(t)["code"] != "INVALID_API_KEY" {
			t.Fatalf("revoked key: %d %s", r.status, r.body)
		}

		// IP allow-list.
		if err := e.st.UpdateAccountSettings(context.Background(), e.account.ID, []string{"10.0.0.0/8", "2001:db8::1"}, false, 1); err != nil {
			t.Fatal(err)
		}
		if r := e.do("GET", "/api/v1/integration/balance", e.testKey, nil); r.status != 403 || r.json(t)["code"] != "IP_NOT_ALLOWED" {
			t.Fatalf("allow-list: %d %s", r.status, r.body)
		}
		if err := e.st.UpdateAccountSettings(context.Background(), e.account.ID, []string{"10.0.0.0/8", "127.0.0.1/32"}, false, 1); err != nil {
			t.Fatal(err)
		}
		if r := e.do("GET", "/api/v1/integration/balance", e.testKey, nil); r.status != 200 {
			t.Fatalf("allow-listed address refused: %d %s", r.status, r.body)
		}
	})
}

func send(t *testing.T, e *env, key string, body map[string]any, headers ...string) response {
	t.Helper()
	return e.do("POST", "/api/v1/integration/messages", key, body, headers...)
}

func TestSendValidation(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	many := make([]string, 1001)
	for i := range many {
		many[i] = fmt.Sprintf("55119%08d", i+100)
	}
	long := strings.Repeat("a", 1531)
	longUCS := strings.Repeat("ж", 671)
	cases := []struct {
		name  string
		body  any
		field string
	}{
		{"bad number", map[string]any{"to": "12ab", "message": "hi", "type": "SMS"}, "to"},
		{"two plus signs", map[string]any{"to": "++5511999990000", "message": "hi", "type": "SMS"}, "to"},
		{"plus inside", map[string]any{"to": "55+11999990000", "message": "hi", "type": "SMS"}, "to"},
		{"spaces", map[string]any{"to": "+55 11 99999 0000", "message": "hi", "type": "SMS"}, "to"},
		{"not a real number", map[string]any{"to": "5500000000000", "message": "hi", "type": "SMS"}, "to"},
		{"both to and recipients", map[string]any{"to": "5511999990000", "recipients": []string{"5511999990000"}, "message": "hi", "type": "SMS"}, "to"},
		{"no recipient", map[string]any{"message": "hi", "type": "SMS"}, "to"},
		{"empty recipients", map[string]any{"recipients": []string{}, "message": "hi", "type": "SMS"}, "recipients"},
		{"too many recipients", map[string]any{"recipients": many, "message": "hi", "type": "SMS"}, "recipients"},
		{"bad recipient in batch", map[string]any{"recipients": []string{"5511999990000", "99"}, "message": "hi", "type": "SMS"}, "recipients[1]"},
		{"duplicate recipient", map[string]any{"recipients": []string{"5511999990000", "5511999990000"}, "message": "hi", "type": "SMS"}, "recipients[1]"},
		{"no type", map[string]any{"to": "5511999990000", "message": "hi"}, "type"},
		{"bad type", map[string]any{"to": "5511999990000", "message": "hi", "type": "FAX"}, "type"},
		{"no message", map[string]any{"to": "5511999990000", "type": "SMS"}, "message"},
		{"SMS too long", map[string]any{"to": "5511999990000", "message": long, "type": "SMS"}, "message"},
		{"UCS-2 too long", map[string]any{"to": "5511999990000", "message": longUCS, "type": "SMS"}, "message"},
		{"WhatsApp too long", map[string]any{"to": "5511999990000", "message": strings.Repeat("x", 1001), "type": "WHATSAPP"}, "message"},
		{"validity low", map[string]any{"to": "5511999990000", "message": "hi", "type": "SMS", "validity": 59}, "validity"},
		{"validity high", map[string]any{"to": "5511999990000", "message": "hi", "type": "SMS", "validity": 259201}, "validity"},
		{"schedule far", map[string]any{"to": "5511999990000", "message": "hi", "type": "SMS", "scheduledAt": time.Now().Add(36 * 24 * time.Hour).Format(time.RFC3339)}, "scheduledAt"},
		{"schedule garbage", map[string]any{"to": "5511999990000", "message": "hi", "type": "SMS", "scheduledAt": "tomorrow"}, "scheduledAt"},
		{"reference long", map[string]any{"to": "5511999990000", "message": "hi", "type": "SMS", "reference": strings.Repeat("r", 129)}, "reference"},
		{"callback not a URL", map[string]any{"to": "5511999990000", "message": "hi", "type": "SMS", "callbackUrl": "ftp://x"}, "callbackUrl"},
		{"buttons on SMS", map[string]any{"to": "5511999990000", "message": "hi", "type": "SMS", "buttons": []any{}}, "buttons"},
	}
	for _, c := range cases {
		r := send(t, e, e.liveKey, c.body.(map[string]any))
		p := r.json(t)
		if r.status != 400 || p["code"] != "VALIDATION_ERROR" {
			t.Fatalf("%s: %d %s", c.name, r.status, r.body)
		}
		found := false
		for _, fe := range p["errors"].([]any) {
			if fe.(map[string]any)["field"] == c.field {
				found = true
			}
		}
		if !found {
			t.Fatalf("%s: no error for field %q: %s", c.name, c.field, r.body)
		}
	}
	// The UCS-2 refusal names the characters that forced it.
	r := send(t, e, e.liveKey, map[string]any{"to": "5511999990000", "message": longUCS, "type": "SMS"})
	if !strings.Contains(string(r.body), "ж") {
		t.Fatalf("UCS-2 detail does not name the character: %s", r.body)
	}
	// Nothing was charged by any of it.
	a, _ := e.st.Account(context.Background(), e.account.ID)
	if a.Balance != 1000_000000 {
		t.Fatalf("balance changed to %d", a.Balance)
	}
	// http callbacks are refused unless allowed.
	no := false
	strict := newEnv(t, "sqlite", envOptions{allowPrivate: &no})
	for _, u := range []string{"http://example.com/h", "https://127.0.0.1/h", "https://[::1]/h", "https://10.1.2.3/h"} {
		r := send(t, strict, strict.liveKey, map[string]any{"to": "5511999990000", "message": "hi", "type": "SMS", "callbackUrl": u})
		if r.status != 400 {
			t.Fatalf("callback %s accepted: %d", u, r.status)
		}
	}
}

func TestSendChargesAndShape(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{credits: 10})
		ctx := context.Background()
		// Home country is 55: 1 credit per segment; abroad 2.
		r := send(t, e, e.liveKey, map[string]any{"recipients": []string{"5511999990000", "14155552671"}, "message": strings.Repeat("a", 161), "type": "sms", "reference": "order-7"})
		if r.status != 202 {
			t.Fatalf("send: %d %s", r.status, r.body)
		}
		b := r.json(t)
		if b["status"] != "SENDING" || b["credits"] != 6.0 || !strings.HasPrefix(b["campaignId"].(string), "cmp_") {
			t.Fatalf("response: %s", r.body)
		}
		msgs := b["messages"].([]any)
		m0 := msgs[0].(map[string]any)
		if len(msgs) != 2 || m0["segments"] != 2.0 || m0["encoding"] != "GSM-7" || m0["credits"] != 2.0 || m0["status"] != "SENDING" ||
			!strings.HasPrefix(m0["messageId"].(string), "msg_") || msgs[1].(map[string]any)["credits"] != 4.0 {
			t.Fatalf("messages: %s", r.body)
		}
		a, _ := e.st.Account(ctx, e.account.ID)
		sum, _ := e.st.LedgerSum(ctx, e.account.ID)
		if a.Balance != 4_000000 || sum != a.Balance {
			t.Fatalf("balance %d, ledger %d", a.Balance, sum)
		}
		// Test keys show the price but never pay it.
		r = send(t, e, e.testKey, map[string]any{"to": "14155552671", "message": "hello", "type": "SMS"})
		if r.status != 202 || r.json(t)["credits"] != 2.0 {
			t.Fatalf("test send: %d %s", r.status, r.body)
		}
		// A send larger than the balance is refused whole.
		r = send(t, e, e.liveKey, map[string]any{"recipients": []string{"5511999990000", "5511999990002", "14155552671", "14155552672"}, "message": "x", "type": "SMS"})
		if r.status != 402 || r.json(t)["code"] != "INSUFFICIENT_CREDITS" {
			t.Fatalf("insufficient: %d %s", r.status, r.body)
		}
		a, _ = e.st.Account(ctx, e.account.ID)
		if a.Balance != 4_000000 {
			t.Fatalf("balance after refusal %d", a.Balance)
		}
		// Dry run prices without sending.
		r = e.do("POST", "/api/v1/integration/messages?dryRun=true", e.liveKey, map[string]any{"to": "5511999990000", "message": "€", "type": "SMS"})
		if db := r.json(t); r.status != 200 || db["dryRun"] != true || db["campaignId"] != nil || db["credits"] != 1.0 {
			t.Fatalf("dry run: %d %s", r.status, r.body)
		}
		a, _ = e.st.Account(ctx, e.account.ID)
		if a.Balance != 4_000000 {
			t.Fatalf("dry run charged: %d", a.Balance)
		}
		// The message query shows the reference and the price.
		mid := m0["messageId"].(string)
		g := e.do("GET", "/api/v1/integration/messages/"+mid, e.liveKey, nil).json(t)
		if g["reference"] != "order-7" || g["credits"] != 2.0 || g["type"] != "SMS" || g["channel"] != "SMS" || g["to"] != "5511999990000" {
			t.Fatalf("message: %v", g)
		}
	})
}

func TestIdempotency(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{credits: 100})
		body := map[string]any{"to": "5511999990000", "message": "once", "type": "SMS"}
		r1 := send(t, e, e.liveKey, body, "Idempotency-Key", "k-1")
		r2 := send(t, e, e.liveKey, body, "Idempotency-Key", "k-1")
		if r1.status != 202 || r2.status != 202 || string(r1.body) != string(r2.body) || r2.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: %d %s / %d %s", r1.status, r1.body, r2.status, r2.body)
		}
		if r1.header.Get("Idempotent-Replayed") != "" {
			t.Fatal("first answer marked replayed")
		}
		r3 := send(t, e, e.liveKey, map[string]any{"to": "5511999990000", "message": "different", "type": "SMS"}, "Idempotency-Key", "k-1")
		if r3.status != 409 || r3.json(t)["code"] != "IDEMPOTENCY_CONFLICT" {
			t.Fatalf("conflict: %d %s", r3.status, r3.body)
		}
		// Concurrent requests with one key send once.
		var wg sync.WaitGroup
		bodies := make([]string, 8)
		for i := range bodies {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				r := send(t, e, e.liveKey, map[string]any{"to": "5511999990000", "message": "race", "type": "SMS"}, "Idempotency-Key", "k-race")
				bodies[i] = fmt.Sprint(r.status, string(r.body))
			}(i)
		}
		wg.Wait()
		for _, b := range bodies[1:] {
			if b != bodies[0] {
				t.Fatalf("different answers for one key: %s vs %s", bodies[0], b)
			}
		}
		a, _ := e.st.Account(context.Background(), e.account.ID)
		if a.Balance != 98_000000 {
			t.Fatalf("charged more than twice: balance %d", a.Balance)
		}
		// Other keys of the same account have their own key space.
		r4 := send(t, e, e.testKey, body, "Idempotency-Key", "k-1")
		if r4.status != 202 || r4.header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("key scope: %d %s", r4.status, r4.body)
		}
	})
}

func TestConcurrentSendsNeverOverdraw(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{credits: 20})
		var wg sync.WaitGroup
		var mu sync.Mutex
		codes := map[int]int{}
		for i := 0; i < 30; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := send(t, e, e.liveKey, map[string]any{"to": "14155552671", "message": "x", "type": "SMS"}) // 2 credits
				mu.Lock()
				codes[r.status]++
				mu.Unlock()
			}()
		}
		wg.Wait()
		a, _ := e.st.Account(context.Background(), e.account.ID)
		sum, _ := e.st.LedgerSum(context.Background(), e.account.ID)
		if codes[202] != 10 || codes[402] != 20 || a.Balance != 0 || sum != 0 {
			t.Fatalf("codes %v, balance %d, ledger %d", codes, a.Balance, sum)
		}
	})
}

func finalStatus(t *testing.T, e *env, key, mid string, want string) map[string]any {
	t.Helper()
	var m map[string]any
	polltest.For(t, mid+" to reach "+want, 10*time.Second, func() bool {
		m = e.do("GET", "/api/v1/integration/messages/"+mid, key, nil).json(t)
		return m["status"] == want
	})
	return m
}

func TestLifeCycleAndWebhooks(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		ctx := context.Background()
		cases := []struct {
			to, typ  string
			statuses []string
			code     string
		}{
			{"5511999990010", "SMS", []string{"SENT", "DELIVERED"}, ""},
			{"5511999990001", "SMS", []string{"FAILED"}, "INVALID_NUMBER"},
			{"5511999990002", "SMS", []string{"SENT", "FAILED"}, "PROVIDER_ERROR"},
			{"5511999990011", "WHATSAPP", []string{"SENT", "DELIVERED", "READ"}, ""},
			{"5511999990012", "RCS", []string{"SENT", "DELIVERED", "READ"}, ""},
			{"5511999990003", "RCS", []string{"FAILED"}, "RCS_NOT_SUPPORTED"},
		}
		// Free-form WhatsApp needs an open conversation window: 0011 wrote
		// first, in both environments.
		for _, keyEnv := range []domain.Environment{domain.Test, domain.Live} {
			inbound(t, e, keyEnv, "5511999990011", "WHATSAPP")
		}
		for _, key := range []string{e.testKey, e.liveKey} {
			for _, c := range cases {
				r := send(t, e, key, map[string]any{"to": c.to, "message": "hello", "type": c.typ, "callbackUrl": e.hooks.url()})
				if r.status != 202 {
					t.Fatalf("send %s: %d %s", c.to, r.status, r.body)
				}
				b := r.json(t)
				mid := b["messages"].([]any)[0].(map[string]any)["messageId"].(string)
				cid := b["campaignId"].(string)
				final := c.statuses[len(c.statuses)-1]
				m := finalStatus(t, e, key, mid, final)
				polltest.For(t, "webhooks of "+mid, 10*time.Second, func() bool { return len(e.hooks.forMessage(mid)) >= len(c.statuses) })
				got := e.hooks.forMessage(mid)
				sort.SliceStable(got, func(i, j int) bool { return rankOf(got[i]) < rankOf(got[j]) })
				if strings.Join(got, ",") != strings.Join(c.statuses, ",") {
					t.Fatalf("%s %s: webhooks %v, want %v", c.typ, c.to, got, c.statuses)
				}
				var hist []string
				for _, h := range m["history"].([]any) {
					hm := h.(map[string]any)
					hist = append(hist, hm["status"].(string))
					if !tsRe.MatchString(hm["timestamp"].(string)) {
						t.Fatalf("history timestamp %v", hm["timestamp"])
					}
				}
				if strings.Join(hist, ",") != "SENDING,"+strings.Join(c.statuses, ",") {
					t.Fatalf("history %v", hist)
				}
				if c.code != "" && (m["errorCode"] != c.code || m["errorMessage"] == nil) {
					t.Fatalf("error: %v", m)
				}
				for _, h := range e.hooks.all() {
					if h.payload["messageId"] != mid {
						continue
					}
					checkStatusPayload(t, h, cid, mid, c.to)
				}
			}
		}
		// Failures before a provider took the message are refunded; the
		// live INVALID_NUMBER and RCS_NOT_SUPPORTED sends cost nothing in the end.
		a, _ := e.st.Account(ctx, e.account.ID)
		sum, _ := e.st.LedgerSum(ctx, e.account.ID)
		// Live charges kept: SMS 1+1 (0010, 0002), WhatsApp 0 (inside the
		// window), RCS 1 = 3 credits.
		if a.Balance != 997_000000 || sum != a.Balance {
			t.Fatalf("balance %d ledger %d", a.Balance, sum)
		}
		e.hooks.mu.Lock()
		bad := e.hooks.badSigs
		e.hooks.mu.Unlock()
		if bad != 0 {
			t.Fatalf("%d webhook signatures did not verify", bad)
		}
	})
}

func rankOf(s string) int {
	return map[string]int{"SENDING": 0, "SENT": 1, "DELIVERED": 2, "READ": 3, "FAILED": 4, "CANCELED": 4}[s]
}

func checkStatusPayload(t *testing.T, h hook, cid, mid, phone string) {
	t.Helper()
	want := []string{"campaignId", "errorCode", "errorMessage", "event", "messageId", "phone", "provider", "status", "timestamp"}
	var keys []string
	for k := range h.payload {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if strings.Join(keys, ",") != strings.Join(want, ",") {
		t.Fatalf("payload fields %v", keys)
	}
	p := h.payload
	if p["event"] != "delivery_status" || p["campaignId"] != cid || p["messageId"] != mid || p["phone"] != phone ||
		p["provider"] != "simulator" || !tsRe.MatchString(p["timestamp"].(string)) {
		t.Fatalf("payload %s", h.raw)
	}
	if p["status"] == "FAILED" {
		if p["errorCode"] == nil || p["errorMessage"] == nil {
			t.Fatalf("failed payload without error: %s", h.raw)
		}
	} else if p["errorCode"] != nil || p["errorMessage"] != nil {
		t.Fatalf("error fields not null: %s", h.raw)
	}
	if !strings.HasPrefix(h.id, "evt_") || h.header.Get("webhook-timestamp") == "" ||
		!strings.HasPrefix(h.header.Get("webhook-signature"), "v1,") || h.header.Get("Content-Type") != "application/json" {
		t.Fatalf("headers %v", h.header)
	}
}

func TestRepliesRouteToLatestCampaign(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		// 0004 answers "OK" by itself after delivery.
		r := send(t, e, e.testKey, map[string]any{"to": "5511999990004", "message": "hello", "type": "SMS", "callbackUrl": e.hooks.url()})
		cid := r.json(t)["campaignId"].(string)
		reply := e.hooks.first("the simulated reply", isReply)
		if reply["campaignId"] != cid || reply["phone"] != "5511999990004" || reply["message"] != "OK" || reply["channel"] != "SMS" ||
			!tsRe.MatchString(reply["receivedAt"].(string)) || len(reply) != 6 {
			t.Fatalf("reply payload %v", reply)
		}
		// Injected replies go to the most recent campaign to that number.
		send(t, e, e.testKey, map[string]any{"to": "5511999990020", "message": "first", "type": "SMS", "callbackUrl": e.hooks.url() + "?c=1"})
		r2 := send(t, e, e.testKey, map[string]any{"to": "5511999990020", "template": map[string]any{"name": "second", "language": "en"},
			"type": "WHATSAPP", "callbackUrl": e.hooks.url() + "?c=2"})
		cid2 := r2.json(t)["campaignId"].(string)
		ir := e.do("POST", "/api/v1/integration/test/replies", e.testKey, map[string]any{"from": "5511999990020", "message": "STOP", "channel": "whatsapp"})
		if ir.status != 202 || ir.json(t)["campaignId"] != cid2 {
			t.Fatalf("inject: %d %s", ir.status, ir.body)
		}
		stop := e.hooks.first("injected reply webhook", func(p map[string]any) bool { return isReply(p) && p["message"] == "STOP" })
		if stop["campaignId"] != cid2 || stop["channel"] != "WHATSAPP" {
			t.Fatalf("injected reply webhook %v", stop)
		}
		// A reply from a number never written to is stored without a webhook.
		if r := e.do("POST", "/api/v1/integration/test/replies", e.testKey, map[string]any{"from": "5511988887777", "message": "who?"}); r.status != 202 || r.json(t)["campaignId"] != nil {
			t.Fatalf("unmatched reply: %d %s", r.status, r.body)
		}
	})
}

func TestScheduleCancelAndCampaigns(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{credits: 100})
		ctx := context.Background()
		at := e.clock.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		r := send(t, e, e.liveKey, map[string]any{"recipients": []string{"5511999990030", "5511999990031", "5511999990032", "5511999990033", "5511999990034"},
			"message": "later", "type": "SMS", "scheduledAt": at, "callbackUrl": e.hooks.url()})
		if r.status != 202 {
			t.Fatalf("schedule: %d %s", r.status, r.body)
		}
		b := r.json(t)
		cid := b["campaignId"].(string)
		first := b["messages"].([]any)[0].(map[string]any)["messageId"].(string)
		time.Sleep(200 * time.Millisecond)
		if m := e.do("GET", "/api/v1/integration/messages/"+first, e.liveKey, nil).json(t); m["status"] != "SENDING" || m["scheduledAt"] == nil {
			t.Fatalf("scheduled message moved: %v", m)
		}
		// Paging through the campaign.
		var seen []string
		cursor := ""
		for page := 0; page < 5; page++ {
			path := "/api/v1/integration/campaigns/" + cid + "?limit=2"
			if cursor != "" {
				path += "&cursor=" + cursor
			}
			c := e.do("GET", path, e.liveKey, nil).json(t)
			if c["total"] != 5.0 || c["counts"].(map[string]any)["SENDING"] != 5.0 || c["status"] != "SENDING" {
				t.Fatalf("campaign %v", c)
			}
			for _, m := range c["messages"].([]any) {
				seen = append(seen, m.(map[string]any)["messageId"].(string))
			}
			if c["nextCursor"] == nil {
				break
			}
			cursor = c["nextCursor"].(string)
		}
		if len(seen) != 5 || seen[0] != first {
			t.Fatalf("paged %d messages: %v", len(seen), seen)
		}
		// Cancel one, then the rest of the campaign; all refunded.
		c1 := e.do("POST", "/api/v1/integration/messages/"+first+"/cancel", e.liveKey, nil)
		if c1.status != 200 || c1.json(t)["status"] != "CANCELED" {
			t.Fatalf("cancel: %d %s", c1.status, c1.body)
		}
		if again := e.do("POST", "/api/v1/integration/messages/"+first+"/cancel", e.liveKey, nil); again.status != 409 || again.json(t)["code"] != "MESSAGE_NOT_CANCELABLE" {
			t.Fatalf("second cancel: %d %s", again.status, again.body)
		}
		cc := e.do("POST", "/api/v1/integration/campaigns/"+cid+"/cancel", e.liveKey, nil)
		if cc.status != 200 || cc.json(t)["canceled"] != 4.0 {
			t.Fatalf("campaign cancel: %d %s", cc.status, cc.body)
		}
		a, _ := e.st.Account(ctx, e.account.ID)
		if a.Balance != 100_000000 {
			t.Fatalf("not refunded: %d", a.Balance)
		}
		c := e.do("GET", "/api/v1/integration/campaigns/"+cid, e.liveKey, nil).json(t)
		if c["status"] != "CANCELED" || c["counts"].(map[string]any)["CANCELED"] != 5.0 {
			t.Fatalf("campaign after cancel %v", c)
		}
		polltest.For(t, "CANCELED webhooks", 10*time.Second, func() bool { return len(e.hooks.all()) >= 5 })
		for _, h := range e.hooks.all() {
			if h.payload["status"] != "CANCELED" {
				t.Fatalf("unexpected webhook %s", h.raw)
			}
		}
		// A delivered message cannot be canceled.
		r = send(t, e, e.liveKey, map[string]any{"to": "5511999990040", "message": "now", "type": "SMS"})
		mid := r.json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string)
		finalStatus(t, e, e.liveKey, mid, "DELIVERED")
		if r := e.do("POST", "/api/v1/integration/messages/"+mid+"/cancel", e.liveKey, nil); r.status != 409 {
			t.Fatalf("cancel delivered: %d", r.status)
		}
		// Another account's ids are not found, never forbidden.
		other, _ := CreateAccount(ctx, e.st, NewAccount{Name: "Other", Tier: "pro", Currency: "EUR", Country: "44"}, time.Now())
		ok, _, _ := CreateKey(ctx, e.st, other.ID, "live", time.Now())
		for _, p := range []string{"/api/v1/integration/messages/" + mid, "/api/v1/integration/campaigns/" + cid} {
			if r := e.do("GET", p, ok.Secret, nil); r.status != 404 || r.json(t)["code"] != "NOT_FOUND" {
				t.Fatalf("%s from other account: %d", p, r.status)
			}
		}
		if r := e.do("POST", "/api/v1/integration/messages/"+mid+"/cancel", ok.Secret, nil); r.status != 404 {
			t.Fatalf("cancel from other account: %d", r.status)
		}
	})
}

func TestExpiry(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{credits: 100})
	// 0005 stays SENT: it fails EXPIRED when its validity ends, and keeps
	// its charge (a provider took it).
	r := send(t, e, e.liveKey, map[string]any{"to": "5511999990005", "message": "slow", "type": "SMS", "validity": 60, "callbackUrl": e.hooks.url()})
	mid := r.json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string)
	finalStatus(t, e, e.liveKey, mid, "SENT")
	// A scheduled message whose validity ends before it is due fails too,
	// and is refunded (no provider ever took it).
	at := e.clock.Now().Add(2 * time.Hour).UTC().Format(time.RFC3339)
	r2 := send(t, e, e.liveKey, map[string]any{"to": "5511999990050", "message": "late", "type": "SMS", "scheduledAt": at, "validity": 60})
	mid2 := r2.json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string)
	e.clock.Advance(61 * time.Second)
	m := finalStatus(t, e, e.liveKey, mid, "FAILED")
	if m["errorCode"] != "EXPIRED" {
		t.Fatalf("expired message: %v", m)
	}
	polltest.For(t, "FAILED webhook", 10*time.Second, func() bool {
		s := e.hooks.forMessage(mid)
		return len(s) > 0 && s[len(s)-1] == "FAILED"
	})
	e.clock.Advance(2 * time.Hour)
	if m2 := finalStatus(t, e, e.liveKey, mid2, "FAILED"); m2["errorCode"] != "EXPIRED" {
		t.Fatalf("scheduled expiry: %v", m2)
	}
	a, _ := e.st.Account(context.Background(), e.account.ID)
	if a.Balance != 99_000000 {
		t.Fatalf("balance %d, want 99 credits", a.Balance)
	}
}

func TestWebhookRetriesAndGone(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{retrySchedule: "50ms,50ms,50ms"})
		ctx := context.Background()
		e.hooks.set(func(r *receiver) { r.failNext = 2 })
		r := send(t, e, e.testKey, map[string]any{"to": "5511999990001", "message": "x", "type": "SMS", "callbackUrl": e.hooks.url()})
		mid := r.json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string)
		polltest.For(t, "a retried webhook", 10*time.Second, func() bool { return len(e.hooks.forMessage(mid)) == 1 })
		evs, err := e.st.EventsForMessage(ctx, e.account.ID, mid)
		if err != nil || len(evs) != 1 {
			t.Fatalf("events %v %v", evs, err)
		}
		var atts []domain.Attempt
		polltest.For(t, "attempts recorded", 5*time.Second, func() bool {
			atts, _ = e.st.Attempts(ctx, evs[0].ID)
			return len(atts) == 3
		})
		if atts[0].StatusCode != 500 || atts[1].StatusCode != 500 || atts[2].StatusCode != 204 {
			t.Fatalf("attempts %+v", atts)
		}
		if hooks := e.hooks.all(); hooks[len(hooks)-1].id != evs[0].ID {
			t.Fatal("webhook-id differs from the event id")
		}
		// 410 Gone stops at once; exhausting the schedule marks it failed.
		e.hooks.set(func(r *receiver) { r.status = http.StatusGone })
		r = send(t, e, e.testKey, map[string]any{"to": "5511999990001", "message": "x", "type": "SMS", "callbackUrl": e.hooks.url()})
		gone := r.json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string)
		polltest.For(t, "gone event", 10*time.Second, func() bool {
			evs, _ := e.st.EventsForMessage(ctx, e.account.ID, gone)
			return len(evs) == 1 && evs[0].State != domain.EventPending
		})
		evs, _ = e.st.EventsForMessage(ctx, e.account.ID, gone)
		if evs[0].State != domain.EventGone || evs[0].Attempts != 1 {
			t.Fatalf("410 event: %+v", evs[0])
		}
		e.hooks.set(func(r *receiver) { r.status = http.StatusServiceUnavailable })
		r = send(t, e, e.testKey, map[string]any{"to": "5511999990001", "message": "x", "type": "SMS", "callbackUrl": e.hooks.url()})
		failing := r.json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string)
		polltest.For(t, "exhausted event", 10*time.Second, func() bool {
			evs, _ := e.st.EventsForMessage(ctx, e.account.ID, failing)
			return len(evs) == 1 && evs[0].State == domain.EventFailed && evs[0].Attempts == 4
		})
	})
}

func TestLiveWithoutRouteIsRefunded(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{credits: 10, noLiveRoutes: true})
	r := send(t, e, e.liveKey, map[string]any{"to": "5511999990060", "message": "x", "type": "SMS"})
	mid := r.json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string)
	if m := finalStatus(t, e, e.liveKey, mid, "FAILED"); m["errorCode"] != "NO_ROUTE" ||
		m["errorMessage"] != "no route matches SMS to this destination" || m["credits"] != 0.0 {
		t.Fatalf("message %v", m)
	}
	a, _ := e.st.Account(context.Background(), e.account.ID)
	if a.Balance != 10_000000 {
		t.Fatalf("not refunded: %d", a.Balance)
	}
	// Test keys still reach the simulator.
	r = send(t, e, e.testKey, map[string]any{"to": "5511999990060", "message": "x", "type": "SMS"})
	finalStatus(t, e, e.testKey, r.json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string), "DELIVERED")
}

func TestTemplatesAndMediaOnSends(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	cases := []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"unknown template", map[string]any{"to": "5511999990070", "type": "WHATSAPP", "template": map[string]any{"name": "nope", "language": "en"}}, "template.name"},
		{"pending template", map[string]any{"to": "5511999990070", "type": "WHATSAPP", "template": map[string]any{"name": "draft", "language": "en"}}, "template.name"},
		{"missing parameter", map[string]any{"to": "5511999990070", "type": "WHATSAPP", "template": map[string]any{"name": "order", "language": "en", "parameters": []string{"42"}}}, "template.parameters"},
		{"unknown media", map[string]any{"to": "5511999990070", "type": "RCS", "message": "pic", "media": map[string]any{"mediaId": "med_nothing"}}, "media.mediaId"},
		{"private media URL", map[string]any{"to": "5511999990070", "type": "RCS", "message": "pic", "media": map[string]any{"url": "http://10.0.0.1/a.png"}}, "media.url"},
	}
	for _, c := range cases {
		r := send(t, e, e.testKey, c.body)
		if r.status != 400 || !strings.Contains(string(r.body), `"field":"`+c.field) {
			t.Fatalf("%s: %d %s", c.name, r.status, r.body)
		}
	}
	r := send(t, e, e.testKey, map[string]any{"to": "5511999990070", "type": "WHATSAPP", "template": map[string]any{"name": "order", "language": "en", "parameters": []string{"42", "on its way"}}})
	if r.status != 202 {
		t.Fatalf("template send: %d %s", r.status, r.body)
	}
}
