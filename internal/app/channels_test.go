package app

import (
	"bytes"
	"context"
	"fmt"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/media/mediatest"
	"github.com/msgsvc/msgsvc/internal/polltest"
	"io"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/store"
)

// fieldsOf lists the fields named by a problem response.
func fieldsOf(t *testing.T, r response) []string {
	t.Helper()
	var out []string
	errs, _ := r.json(t)["errors"].([]any)
	for _, fe := range errs {
		out = append(out, fe.(map[string]any)["field"].(string))
	}
	return out
}

// inbound records a recipient's message to the account, as a provider
// would report it (test replies exist for test keys only).
func inbound(t *testing.T, e *env, keyEnv domain.Environment, from string, channel domain.Channel) {
	t.Helper()
	if _, err := e.srv.tracker.Receive(context.Background(), "simulator", provider.Inbound{AccountID: e.account.ID,
		Env: keyEnv, From: from, Channel: channel, Body: "hi"}); err != nil {
		t.Fatal(err)
	}
}

func balance(t *testing.T, e *env) int64 {
	t.Helper()
	a, err := e.st.Account(context.Background(), e.account.ID)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := e.st.LedgerSum(context.Background(), e.account.ID)
	if err != nil || sum != a.Balance {
		t.Fatalf("balance %d, ledger sum %d (%v)", a.Balance, sum, err)
	}
	return a.Balance
}

// ledgerOf lists a message's ledger lines, oldest first.
func ledgerOf(t *testing.T, e *env, mid string) []ledger.Entry {
	t.Helper()
	all, err := e.st.Ledger(context.Background(), e.account.ID, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []ledger.Entry
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].MessageID == mid {
			out = append(out, all[i])
		}
	}
	return out
}

func sent(t *testing.T, r response) (mid string, credits float64) {
	t.Helper()
	if r.status != 202 {
		t.Fatalf("send: %d %s", r.status, r.body)
	}
	m := r.json(t)["messages"].([]any)[0].(map[string]any)
	return m["messageId"].(string), m["credits"].(float64)
}

func TestChannelLimits(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	to := "5511999990000"
	reply := func(i int) map[string]any {
		return map[string]any{"type": "reply", "title": fmt.Sprintf("Option %d", i), "payload": fmt.Sprintf("p%d", i)}
	}
	replies := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = reply(i)
		}
		return out
	}
	rows := func(n int, prefix string) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = map[string]any{"id": fmt.Sprintf("%s-%d", prefix, i), "title": fmt.Sprintf("Row %d", i)}
		}
		return out
	}
	section := func(title string, rs []any) map[string]any { return map[string]any{"title": title, "rows": rs} }
	list := func(sections ...any) map[string]any { return map[string]any{"button": "Choose", "sections": sections} }
	card := func(title string) map[string]any { return map[string]any{"title": title, "description": "d"} }
	cards := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = card(fmt.Sprintf("Card %d", i))
		}
		return out
	}
	wa := func(extra map[string]any) map[string]any {
		b := map[string]any{"to": to, "message": "hello", "type": "WHATSAPP"}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	rc := func(extra map[string]any) map[string]any {
		b := wa(extra)
		b["type"] = "RCS"
		return b
	}
	tpl := func(t map[string]any) map[string]any {
		return map[string]any{"to": to, "type": "WHATSAPP", "template": t}
	}
	cases := []struct {
		name  string
		body  map[string]any
		field string
	}{
		// WhatsApp: the seed's table.
		{"wa text 1001", wa(map[string]any{"message": strings.Repeat("x", 1001)}), "message"},
		{"wa 4 buttons", wa(map[string]any{"buttons": replies(4)}), "buttons"},
		{"wa empty buttons", wa(map[string]any{"buttons": []any{}}), "buttons"},
		{"wa 4 sections", wa(map[string]any{"list": list(section("a", rows(1, "a")), section("b", rows(1, "b")), section("c", rows(1, "c")), section("d", rows(1, "d")))}), "list.sections"},
		{"wa 11 rows", wa(map[string]any{"list": list(section("a", rows(11, "a")))}), "list.sections[0].rows"},
		{"wa 31 rows", wa(map[string]any{"list": list(section("a", rows(11, "a")), section("b", rows(10, "b")), section("c", rows(10, "c")))}), "list.sections"},
		// WhatsApp: the platform's lengths and uniqueness.
		{"wa title 21", wa(map[string]any{"buttons": []any{map[string]any{"type": "reply", "title": strings.Repeat("t", 21), "payload": "p"}}}), "buttons[0].title"},
		{"wa no payload", wa(map[string]any{"buttons": []any{map[string]any{"type": "reply", "title": "t"}}}), "buttons[0].payload"},
		{"wa same payload", wa(map[string]any{"buttons": []any{reply(0), map[string]any{"type": "reply", "title": "x", "payload": "p0"}}}), "buttons[1].payload"},
		{"wa bad button type", wa(map[string]any{"buttons": []any{map[string]any{"type": "flash", "title": "t"}}}), "buttons[0].type"},
		{"wa url with replies", wa(map[string]any{"buttons": []any{reply(0), map[string]any{"type": "url", "title": "Shop", "url": "https://example.com"}}}), "buttons[1].type"},
		{"wa url bad", wa(map[string]any{"buttons": []any{map[string]any{"type": "url", "title": "Shop", "url": "example.com"}}}), "buttons[0].url"},
		{"wa call bad phone", wa(map[string]any{"buttons": []any{map[string]any{"type": "call", "title": "Call", "phone": "12"}}}), "buttons[0].phone"},
		{"wa unknown button field", wa(map[string]any{"buttons": []any{map[string]any{"type": "reply", "title": "t", "payload": "p", "colour": "red"}}}), "buttons[0].colour"},
		{"wa buttons not array", wa(map[string]any{"buttons": "yes"}), "buttons"},
		{"wa list button 21", wa(map[string]any{"list": map[string]any{"button": strings.Repeat("b", 21), "sections": []any{section("a", rows(1, "a"))}}}), "list.button"},
		{"wa row title 25", wa(map[string]any{"list": list(section("a", []any{map[string]any{"id": "x", "title": strings.Repeat("r", 25)}}))}), "list.sections[0].rows[0].title"},
		{"wa row description 73", wa(map[string]any{"list": list(section("a", []any{map[string]any{"id": "x", "title": "r", "description": strings.Repeat("d", 73)}}))}), "list.sections[0].rows[0].description"},
		{"wa row id 201", wa(map[string]any{"list": list(section("a", []any{map[string]any{"id": strings.Repeat("i", 201), "title": "r"}}))}), "list.sections[0].rows[0].id"},
		{"wa row id repeated", wa(map[string]any{"list": list(section("a", rows(2, "a")), section("b", rows(4, "a")))}), "list.sections[1].rows[0].id"},
		{"wa row title wrong type", wa(map[string]any{"list": list(section("a", rows(2, "a")), section("b", []any{map[string]any{"id": "z", "title": 7}}))}), "list.sections[1].rows[0].title"},
		{"wa section title 25", wa(map[string]any{"list": list(section(strings.Repeat("s", 25), rows(1, "a")))}), "list.sections[0].title"},
		{"wa untitled sections", wa(map[string]any{"list": list(section("", rows(1, "a")), section("b", rows(1, "b")))}), "list.sections[0].title"},
		{"wa list and buttons", wa(map[string]any{"buttons": replies(1), "list": list(section("a", rows(1, "a")))}), "list"},
		{"wa list and media", wa(map[string]any{"media": map[string]any{"url": "https://example.com/a.jpg"}, "list": list(section("a", rows(1, "a")))}), "media"},
		{"wa cards", wa(map[string]any{"cards": cards(1)}), "cards"},
		{"wa fallback", wa(map[string]any{"fallback": map[string]any{"type": "SMS"}}), "fallback"},
		// Media shape.
		{"media empty", wa(map[string]any{"media": map[string]any{}}), "media"},
		{"media both", wa(map[string]any{"media": map[string]any{"mediaId": "med_1", "url": "https://example.com/a.jpg"}}), "media"},
		{"media http", wa(map[string]any{"media": map[string]any{"url": "http://example.com/a.jpg"}}), "media.url"},
		{"media unknown field", wa(map[string]any{"media": map[string]any{"path": "/etc/passwd"}}), "media.path"},
		// Templates.
		{"template with text", map[string]any{"to": to, "type": "WHATSAPP", "message": "hi", "template": map[string]any{"name": "a", "language": "en"}}, "message"},
		{"template no name", tpl(map[string]any{"language": "en"}), "template.name"},
		{"template bad name", tpl(map[string]any{"name": "Order Shipped", "language": "en"}), "template.name"},
		{"template no language", tpl(map[string]any{"name": "order"}), "template.language"},
		{"template empty parameter", tpl(map[string]any{"name": "order", "language": "en", "parameters": []any{"a", ""}}), "template.parameters[1]"},
		{"template parameter newline", tpl(map[string]any{"name": "order", "language": "en", "parameters": []any{"a\nb"}}), "template.parameters[0]"},
		{"template parameter number", tpl(map[string]any{"name": "order", "language": "en", "parameters": []any{"a", 3}}), "template.parameters[1]"},
		{"template on RCS", map[string]any{"to": to, "type": "RCS", "template": map[string]any{"name": "a", "language": "en"}}, "template"},
		// RCS: the seed's table and RBM's lengths.
		{"rcs text 1001", rc(map[string]any{"message": strings.Repeat("x", 1001)}), "message"},
		{"rcs 4 buttons", rc(map[string]any{"buttons": replies(4)}), "buttons"},
		{"rcs suggestion 26", rc(map[string]any{"buttons": []any{map[string]any{"type": "reply", "title": strings.Repeat("t", 26), "payload": "p"}}}), "buttons[0].title"},
		{"rcs call no phone", rc(map[string]any{"buttons": []any{map[string]any{"type": "call", "title": "Call"}}}), "buttons[0].phone"},
		{"rcs url with payload", rc(map[string]any{"buttons": []any{map[string]any{"type": "url", "title": "Go", "url": "https://example.com", "payload": "x"}}}), "buttons[0].payload"},
		{"rcs 11 cards", rc(map[string]any{"cards": cards(11)}), "cards"},
		{"rcs no cards", rc(map[string]any{"cards": []any{}}), "cards"},
		{"rcs empty card", rc(map[string]any{"cards": []any{map[string]any{}}}), "cards[0]"},
		{"rcs card title 201", rc(map[string]any{"cards": []any{card(strings.Repeat("t", 201))}}), "cards[0].title"},
		{"rcs card 5 buttons", rc(map[string]any{"cards": []any{card("a"), map[string]any{"title": "b", "buttons": replies(5)}}}), "cards[1].buttons"},
		{"rcs card button title", rc(map[string]any{"cards": []any{map[string]any{"title": "b", "buttons": []any{map[string]any{"type": "reply", "title": "", "payload": "p"}}}}}), "cards[0].buttons[0].title"},
		{"rcs card media http", rc(map[string]any{"cards": []any{map[string]any{"media": map[string]any{"url": "http://x.example/a.png"}}}}), "cards[0].media.url"},
		{"rcs media and cards", rc(map[string]any{"media": map[string]any{"mediaId": "med_1"}, "cards": cards(2)}), "media"},
		{"rcs list", rc(map[string]any{"list": list(section("a", rows(1, "a")))}), "list"},
		{"rcs fallback type", rc(map[string]any{"fallback": map[string]any{"type": "MMS"}}), "fallback.type"},
		{"rcs fallback empty text", rc(map[string]any{"fallback": map[string]any{"type": "SMS", "message": ""}}), "fallback.message"},
		{"rcs fallback too long", rc(map[string]any{"fallback": map[string]any{"type": "SMS", "message": strings.Repeat("ж", 671)}}), "fallback.message"},
		{"rcs text too long for fallback", rc(map[string]any{"message": strings.Repeat("ж", 700), "fallback": map[string]any{"type": "SMS"}}), "message"},
		// Batches on every channel.
		{"wa duplicate recipient", map[string]any{"recipients": []string{to, to}, "type": "WHATSAPP", "template": map[string]any{"name": "a", "language": "en"}}, "recipients[1]"},
		{"rcs duplicate recipient", map[string]any{"recipients": []string{"5511999990012", to, "5511999990012"}, "type": "RCS", "message": "x"}, "recipients[2]"},
		{"rcs bad recipient", map[string]any{"recipients": []string{to, "55"}, "type": "RCS", "message": "x"}, "recipients[1]"},
		{"wa too many recipients", map[string]any{"recipients": manyNumbers(1001), "type": "WHATSAPP", "template": map[string]any{"name": "a", "language": "en"}}, "recipients"},
		{"rcs too many recipients", map[string]any{"recipients": manyNumbers(1001), "type": "RCS", "message": "x"}, "recipients"},
	}
	for _, c := range cases {
		for _, key := range []string{e.testKey, e.liveKey} {
			r := send(t, e, key, c.body)
			if r.status != 400 || r.json(t)["code"] != "VALIDATION_ERROR" {
				t.Fatalf("%s: %d %s", c.name, r.status, r.body)
			}
			if fs := fieldsOf(t, r); !contains(fs, c.field) {
				t.Fatalf("%s: fields %v, want %q: %s", c.name, fs, c.field, r.body)
			}
		}
	}
	// The largest sends each channel allows pass (the numbers have written,
	// so free-form WhatsApp is allowed).
	inbound(t, e, "test", to, domain.WhatsApp)
	up := e.uploadMedia(e.testKey, "photo.png", "image/png", mediatest.PNG())
	if up.status != 201 {
		t.Fatalf("upload: %d %s", up.status, up.body)
	}
	mediaID := up.json(t)["mediaId"].(string)
	ok := []map[string]any{
		wa(map[string]any{"buttons": replies(3), "message": strings.Repeat("x", 1000), "media": map[string]any{"mediaId": mediaID}}),
		wa(map[string]any{"list": list(section("a", rows(10, "a")), section("b", rows(10, "b")), section("c", rows(10, "c")))}),
		wa(map[string]any{"buttons": []any{map[string]any{"type": "url", "title": "Shop", "url": "http://example.com/shop"}}}),
		wa(map[string]any{"buttons": []any{map[string]any{"type": "call", "title": "Call us", "phone": "5511999990000"}}}),
		tpl(map[string]any{"name": "order_shipped", "language": "pt_BR", "parameters": []any{"Ana", "1042"}}),
		rc(map[string]any{"buttons": replies(3), "message": strings.Repeat("x", 1000)}),
		rc(map[string]any{"cards": append(cards(9), map[string]any{"title": "t", "media": map[string]any{"url": "https://example.com/a.gif"},
			"buttons": []any{reply(0), reply(1), reply(2), map[string]any{"type": "call", "title": "Call", "phone": "14155552671"}}})}),
		rc(map[string]any{"fallback": map[string]any{"type": "sms", "message": "short"}, "message": strings.Repeat("ж", 1000)}),
	}
	for i, b := range ok {
		if r := send(t, e, e.testKey, b); r.status != 202 {
			t.Fatalf("allowed send %d: %d %s", i, r.status, r.body)
		}
	}
}

func manyNumbers(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("55119%08d", i+100)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func TestWhatsAppWindowAndConversations(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		open, closed, other := "5511999990031", "5511999990032", "5511999990033"
		tpl := map[string]any{"name": "order_shipped", "language": "en", "parameters": []any{"Ana"}}

		// Never written: free-form is refused, naming the field.
		r := send(t, e, e.testKey, map[string]any{"to": open, "message": "hi", "type": "WHATSAPP"})
		if r.status != 422 || r.json(t)["code"] != "OUTSIDE_CONVERSATION_WINDOW" || !contains(fieldsOf(t, r), "to") {
			t.Fatalf("closed window: %d %s", r.status, r.body)
		}
		// A reply opens the window (test replies, test key).
		if ir := e.do("POST", "/api/v1/integration/test/replies", e.testKey, map[string]any{"from": open, "message": "hi", "channel": "WHATSAPP"}); ir.status != 202 {
			t.Fatalf("inject: %d %s", ir.status, ir.body)
		}
		mid, credits := sent(t, send(t, e, e.testKey, map[string]any{"to": open, "message": "hi", "type": "WHATSAPP", "callbackUrl": e.hooks.url()}))
		if credits != 0 {
			t.Fatalf("in-window message priced %v", credits)
		}
		finalStatus(t, e, e.testKey, mid, "READ")
		// An SMS reply does not open a WhatsApp window.
		if ir := e.do("POST", "/api/v1/integration/test/replies", e.testKey, map[string]any{"from": other, "message": "hi", "channel": "SMS"}); ir.status != 202 {
			t.Fatalf("inject: %d %s", ir.status, ir.body)
		}
		// A batch is refused whole and names each recipient outside.
		r = send(t, e, e.testKey, map[string]any{"recipients": []string{open, closed, other}, "message": "hi", "type": "WHATSAPP"})
		p := r.json(t)
		if r.status != 422 || p["code"] != "OUTSIDE_CONVERSATION_WINDOW" || strings.Join(fieldsOf(t, r), ",") != "recipients[1],recipients[2]" ||
			!strings.Contains(p["detail"].(string), closed) || !strings.Contains(p["detail"].(string), other) || strings.Contains(p["detail"].(string), open) {
			t.Fatalf("batch: %d %s", r.status, r.body)
		}
		// The window is per environment: the live key has no window with open yet.
		if r := send(t, e, e.liveKey, map[string]any{"to": open, "message": "hi", "type": "WHATSAPP"}); r.status != 422 {
			t.Fatalf("live free-form: %d %s", r.status, r.body)
		}

		// Billing on the live key: 2 per new template conversation, 0 inside.
		inbound(t, e, "live", open, domain.WhatsApp)
		before := balance(t, e)
		cases := []struct {
			name string
			body map[string]any
			want float64
		}{
			{"template outside the window opens a conversation", map[string]any{"to": closed, "type": "WHATSAPP", "template": tpl}, 2},
			{"second template rides on that conversation", map[string]any{"to": closed, "type": "WHATSAPP", "template": tpl}, 0},
			{"template inside the window", map[string]any{"to": open, "type": "WHATSAPP", "template": tpl}, 0},
			{"free-form inside the window", map[string]any{"to": open, "type": "WHATSAPP", "message": "hello"}, 0},
		}
		spent := 0.0
		for _, c := range cases {
			mid, credits := sent(t, send(t, e, e.liveKey, c.body))
			if credits != c.want {
				t.Fatalf("%s: credits %v, want %v", c.name, credits, c.want)
			}
			spent += c.want
			if l := ledgerOf(t, e, mid); c.want > 0 && (len(l) != 1 || l[0].Amount != -int64(c.want*1e6) || l[0].Kind != ledger.Debit) {
				t.Fatalf("%s: ledger %+v", c.name, l)
			}
		}
		if got := balance(t, e); got != before-int64(spent*1e6) {
			t.Fatalf("balance %d, want %d", got, before-int64(spent*1e6))
		}
		// The template to a closed window was delivered like any message.
		// A dry run tells the window and whether a conversation would start.
		dry := e.do("POST", "/api/v1/integration/messages?dryRun=true", e.liveKey, map[string]any{"recipients": []string{open, closed, other},
			"type": "WHATSAPP", "template": tpl}).json(t)
		msgs := dry["messages"].([]any)
		want := []struct {
			window string
			fresh  bool
		}{{"open", false}, {"closed", false}, {"closed", true}}
		for i, w := range want {
			m := msgs[i].(map[string]any)
			if m["conversationWindow"] != w.window || m["newConversation"] != w.fresh {
				t.Fatalf("dry run %d: %v", i, m)
			}
		}
		if dry["credits"] != 2.0 {
			t.Fatalf("dry run credits: %v", dry)
		}
		// A day later the window and the conversation are over.
		e.clock.Advance(25 * time.Hour)
		if r := send(t, e, e.liveKey, map[string]any{"to": open, "message": "hi", "type": "WHATSAPP"}); r.status != 422 {
			t.Fatalf("expired window: %d %s", r.status, r.body)
		}
		if _, credits := sent(t, send(t, e, e.liveKey, map[string]any{"to": closed, "type": "WHATSAPP", "template": tpl})); credits != 2 {
			t.Fatalf("new conversation after a day: %v", credits)
		}
		// Scheduled free-form messages need the window open when they go.
		inbound(t, e, "live", open, domain.WhatsApp)
		later := e.clock.Now().Add(30 * time.Hour).UTC().Format(time.RFC3339)
		if r := send(t, e, e.liveKey, map[string]any{"to": open, "message": "hi", "type": "WHATSAPP", "scheduledAt": later}); r.status != 422 {
			t.Fatalf("scheduled past the window: %d %s", r.status, r.body)
		}
	})
}

func TestWhatsAppDailyLimit(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		ctx := context.Background()
		if err := e.st.UpdateAccountSettings(ctx, e.account.ID, nil, false, 1); err != nil {
			t.Fatal(err)
		}
		// 997 conversations were opened today already.
		now := e.clock.Now()
		seed := make([]string, 997)
		for i := range seed {
			seed[i] = fmt.Sprintf("4420%08d", i)
		}
		err := e.st.Write(ctx, func(tx *store.Tx) error {
			return tx.StartConversations(ctx, domain.Conversations{AccountID: e.account.ID, Env: "live", Phones: seed, At: now, Day: now, Limit: 1000})
		})
		if err != nil {
			t.Fatal(err)
		}
		tpl := map[string]any{"name": "promo", "language": "en"}
		batch := func(ids ...int) []string {
			out := make([]string, len(ids))
			for i, n := range ids {
				out[i] = fmt.Sprintf("55119999%05d", n)
			}
			return out
		}
		before := balance(t, e)
		// 4 new ones would make 1001: refused whole, nothing charged, and the
		// idempotency key is not kept, so the same request may be retried.
		r := send(t, e, e.liveKey, map[string]any{"recipients": batch(1, 2, 3, 4), "type": "WHATSAPP", "template": tpl}, "Idempotency-Key", "daily-1")
		if p := r.json(t); r.status != 429 || p["code"] != "DAILY_LIMIT_REACHED" || !strings.Contains(p["detail"].(string), "1000") {
			t.Fatalf("over the limit: %d %s", r.status, r.body)
		}
		if dr := e.do("POST", "/api/v1/integration/messages?dryRun=true", e.liveKey, map[string]any{"recipients": batch(1, 2, 3, 4),
			"type": "WHATSAPP", "template": tpl}); dr.status != 429 {
			t.Fatalf("dry run over the limit: %d %s", dr.status, dr.body)
		}
		if balance(t, e) != before {
			t.Fatal("a refused send was charged")
		}
		// 3 fit exactly.
		if r := send(t, e, e.liveKey, map[string]any{"recipients": batch(1, 2, 3), "type": "WHATSAPP", "template": tpl}); r.status != 202 || r.json(t)["credits"] != 6.0 {
			t.Fatalf("up to the limit: %d %s", r.status, r.body)
		}
		// Full: a new conversation is refused, one still open is not new.
		if r := send(t, e, e.liveKey, map[string]any{"to": batch(4)[0], "type": "WHATSAPP", "template": tpl}, "Idempotency-Key", "daily-1"); r.status != 429 {
			t.Fatalf("at the limit: %d %s", r.status, r.body)
		}
		if _, credits := sent(t, send(t, e, e.liveKey, map[string]any{"to": batch(2)[0], "type": "WHATSAPP", "template": tpl})); credits != 0 {
			t.Fatalf("open conversation charged %v", credits)
		}
		// Test keys count on their own.
		if r := send(t, e, e.testKey, map[string]any{"to": batch(4)[0], "type": "WHATSAPP", "template": tpl}); r.status != 202 {
			t.Fatalf("test key: %d %s", r.status, r.body)
		}
		if n, _ := e.st.ConversationsOn(ctx, e.account.ID, "live", now); n != 1000 {
			t.Fatalf("live conversations today: %d", n)
		}
		// A higher tier allows more; the next UTC day starts from zero.
		if err := e.st.UpdateAccountSettings(ctx, e.account.ID, nil, false, 2); err != nil {
			t.Fatal(err)
		}
		if r := send(t, e, e.liveKey, map[string]any{"to": batch(4)[0], "type": "WHATSAPP", "template": tpl}); r.status != 202 {
			t.Fatalf("tier 2: %d %s", r.status, r.body)
		}
		if err := e.st.UpdateAccountSettings(ctx, e.account.ID, nil, false, 1); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(24 * time.Hour)
		if r := send(t, e, e.liveKey, map[string]any{"to": batch(5)[0], "type": "WHATSAPP", "template": tpl}, "Idempotency-Key", "daily-1"); r.status != 202 {
			t.Fatalf("next day: %d %s", r.status, r.body)
		}
		// Concurrent sends never overshoot: with 990 used, exactly 10 of 30
		// racing single sends get through.
		day := e.clock.Now()
		err = e.st.Write(ctx, func(tx *store.Tx) error {
			return tx.StartConversations(ctx, domain.Conversations{AccountID: e.account.ID, Env: "live", Phones: seed[:989], At: day, Day: day})
		})
		if err != nil {
			t.Fatal(err)
		}
		codes := make(chan int, 30)
		var wg sync.WaitGroup
		for i := 0; i < 30; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				codes <- send(t, e, e.liveKey, map[string]any{"to": batch(100 + i)[0], "type": "WHATSAPP", "template": tpl}).status
			}(i)
		}
		wg.Wait()
		close(codes)
		count := map[int]int{}
		for c := range codes {
			count[c]++
		}
		if count[202] != 10 || count[429] != 20 {
			t.Fatalf("racing sends: %v", count)
		}
		if n, _ := e.st.ConversationsOn(ctx, e.account.ID, "live", day); n != 1000 {
			t.Fatalf("conversations: %d", n)
		}
		balance(t, e)
	})
}

func TestRCSFallback(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		ctx := context.Background()
		noRCS, rcsOK := "5511999990003", "5511999990012"
		text := strings.Repeat("a", 170) // 2 SMS segments

		// Capable device, SMS fallback dearer (2 segments × 1 > RCS 1): the
		// larger price is reserved and the surplus refunded once it goes as RCS.
		mid, credits := sent(t, send(t, e, e.liveKey, map[string]any{"to": rcsOK, "message": text, "type": "RCS",
			"fallback": map[string]any{"type": "SMS"}, "callbackUrl": e.hooks.url()}))
		if credits != 2 {
			t.Fatalf("reserve: %v", credits)
		}
		m := finalStatus(t, e, e.liveKey, mid, "READ")
		if m["channel"] != "RCS" || m["credits"] != 1.0 {
			t.Fatalf("rcs message: %v", m)
		}
		if l := ledgerOf(t, e, mid); len(l) != 2 || l[0].Amount != -2_000000 || l[1].Amount != 1_000000 || l[1].Kind != ledger.Refund {
			t.Fatalf("rcs ledger: %+v", l)
		}

		// RCS dearer than SMS: 3 credits per RCS message here.
		if err := e.st.SetPrices(ctx, e.account.ID, `{"home":{"smsSegment":1000000,"rcsMessage":3000000,"waConversation":2000000}}`); err != nil {
			t.Fatal(err)
		}
		start := e.clock.Now()
		before := balance(t, e)
		mid, credits = sent(t, send(t, e, e.liveKey, map[string]any{"to": noRCS, "message": "rich text", "type": "RCS",
			"fallback": map[string]any{"type": "SMS", "message": text}, "callbackUrl": e.hooks.url()}))
		if credits != 3 {
			t.Fatalf("reserve: %v", credits)
		}
		m = finalStatus(t, e, e.liveKey, mid, "DELIVERED")
		if m["channel"] != "SMS" || m["type"] != "RCS" || m["segments"] != 2.0 || m["encoding"] != "GSM-7" || m["credits"] != 2.0 || m["provider"] != "simulator" {
			t.Fatalf("fallback message: %v", m)
		}
		polltest.For(t, "fallback webhooks", 10*time.Second, func() bool { return len(e.hooks.forMessage(mid)) >= 2 })
		// Webhooks may arrive in any order (they are posted concurrently and
		// retried); the statuses they carry must be exactly these.
		got := e.hooks.forMessage(mid)
		sort.SliceStable(got, func(i, j int) bool { return rankOf(got[i]) < rankOf(got[j]) })
		if strings.Join(got, ",") != "SENT,DELIVERED" {
			t.Fatalf("fallback webhooks: %v", got)
		}
		for _, h := range e.hooks.all() {
			if h.payload["messageId"] == mid && h.payload["provider"] != "simulator" {
				t.Fatalf("webhook provider: %v", h.payload)
			}
		}
		l := ledgerOf(t, e, mid)
		if len(l) != 2 || l[0].Amount != -3_000000 || l[1].Amount != 1_000000 || l[1].Kind != ledger.Refund || !strings.Contains(l[1].Note, "SMS") {
			t.Fatalf("fallback ledger: %+v", l)
		}
		if got := balance(t, e); got != before-2_000000 {
			t.Fatalf("balance %d, want %d", got, before-2_000000)
		}

		// Without a fallback: FAILED, refunded whole. The capability is
		// cached: the provider is not asked again (the cache row keeps the
		// time of the first answer).
		e.clock.Advance(time.Hour)
		mid, _ = sent(t, send(t, e, e.liveKey, map[string]any{"to": noRCS, "message": "rich", "type": "RCS"}))
		m = finalStatus(t, e, e.liveKey, mid, "FAILED")
		if m["errorCode"] != "RCS_NOT_SUPPORTED" || m["channel"] != "RCS" {
			t.Fatalf("no fallback: %v", m)
		}
		if l := ledgerOf(t, e, mid); len(l) != 2 || l[0].Amount+l[1].Amount != 0 {
			t.Fatalf("no fallback ledger: %+v", l)
		}
		caps, err := e.st.RCSCapabilities(ctx, "live", []string{noRCS}, start.Add(-time.Minute))
		if err != nil || len(caps) != 1 || caps[noRCS] {
			t.Fatalf("cached capability: %v %v", caps, err)
		}
		if again, _ := e.st.RCSCapabilities(ctx, "live", []string{noRCS}, start.Add(30*time.Minute)); len(again) != 0 {
			t.Fatalf("the provider was asked again within the TTL: %v", again)
		}

		// Account-level fallback: the RCS text goes out as SMS.
		if err := e.st.UpdateAccountSettings(ctx, e.account.ID, nil, true, 1); err != nil {
			t.Fatal(err)
		}
		mid, _ = sent(t, send(t, e, e.liveKey, map[string]any{"to": noRCS, "message": "hello €", "type": "RCS"}))
		m = finalStatus(t, e, e.liveKey, mid, "DELIVERED")
		if m["channel"] != "SMS" || m["segments"] != 1.0 || m["credits"] != 1.0 {
			t.Fatalf("account fallback: %v", m)
		}

		// Dry runs tell what is known of the device.
		dry := e.do("POST", "/api/v1/integration/messages?dryRun=true", e.liveKey, map[string]any{"recipients": []string{noRCS, rcsOK, "5511999990077"},
			"message": "x", "type": "RCS"}).json(t)
		msgs := dry["messages"].([]any)
		m0, m1, m2 := msgs[0].(map[string]any), msgs[1].(map[string]any), msgs[2].(map[string]any)
		if m0["rcsCapable"] != false || m0["fallback"] != true || m1["rcsCapable"] != true || m1["fallback"] != false ||
			m2["rcsCapable"] != nil || m2["fallback"] != nil {
			t.Fatalf("dry run: %v", msgs)
		}

		// After the TTL the provider is asked again.
		e.clock.Advance(8 * 24 * time.Hour)
		mid, _ = sent(t, send(t, e, e.liveKey, map[string]any{"to": noRCS, "message": "hi", "type": "RCS"}))
		finalStatus(t, e, e.liveKey, mid, "DELIVERED")
		if fresh, _ := e.st.RCSCapabilities(ctx, "live", []string{noRCS}, e.clock.Now().Add(-time.Hour)); len(fresh) != 1 {
			t.Fatalf("capability not asked again after the TTL: %v", fresh)
		}

		// Test keys: same story, never charged.
		mid, _ = sent(t, send(t, e, e.testKey, map[string]any{"to": noRCS, "message": "hi", "type": "RCS", "fallback": map[string]any{"type": "SMS"}}))
		if m := finalStatus(t, e, e.testKey, mid, "DELIVERED"); m["channel"] != "SMS" {
			t.Fatalf("test key fallback: %v", m)
		}
		if l := ledgerOf(t, e, mid); len(l) != 0 {
			t.Fatalf("test key ledger: %+v", l)
		}
	})
}

func TestPricesPerCountry(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		admin := func(args ...string) (string, error) {
			var out bytes.Buffer
			err := runAdmin(context.Background(), "account", append([]string{"prices", "--db", e.srv.cfg.DB, "--account", e.account.ID}, args...),
				strings.NewReader(""), &out, io.Discard)
			return out.String(), err
		}
		for _, bad := range []string{
			`{"home":{"smsSegment":-1}}`,
			`{"home":{"smsSegmnt":1}}`,
			`{"countries":{"+44":{"smsSegment":1}}}`,
			`{"countries":{"44":{"smsSegment":0.0000001}}}`,
			`{"abroad":{"rcsMessage":"1"}}`,
			`{"colour":1}`,
			`[1]`,
		} {
			if _, err := admin("--set", bad); err == nil {
				t.Fatalf("price table %s accepted", bad)
			}
		}
		// UK SMS at 3 per segment and 0.5 per RCS; abroad SMS at 2.5; the
		// home country keeps its defaults.
		out, err := admin("--json", "--set", `{"abroad":{"smsSegment":2.5},"countries":{"44":{"smsSegment":3,"rcsMessage":0.5}}}`)
		if err != nil || !strings.Contains(out, `"smsSegment": 3`) {
			t.Fatalf("set prices: %v %s", err, out)
		}
		cases := []struct {
			to, typ string
			want    float64
		}{
			{"447911123456", "SMS", 3},
			{"447911123456", "RCS", 0.5},
			{"14155552671", "SMS", 2.5},
			{"14155552671", "RCS", 1},
			{"5511999990000", "SMS", 1},
		}
		for _, c := range cases {
			mid, credits := sent(t, send(t, e, e.liveKey, map[string]any{"to": c.to, "message": "hi", "type": c.typ}))
			if credits != c.want {
				t.Fatalf("%s %s: %v, want %v", c.typ, c.to, credits, c.want)
			}
			if l := ledgerOf(t, e, mid); len(l) != 1 || l[0].Amount != -int64(c.want*1e6) {
				t.Fatalf("%s %s ledger: %+v", c.typ, c.to, l)
			}
		}
		// "{}" restores the defaults.
		if _, err := admin("--set", "{}"); err != nil {
			t.Fatal(err)
		}
		if _, credits := sent(t, send(t, e, e.liveKey, map[string]any{"to": "447911123456", "message": "hi", "type": "SMS"})); credits != 2 {
			t.Fatalf("defaults: %v", credits)
		}
	})
}
