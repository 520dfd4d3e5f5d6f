package twilio

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/intake"
	"github.com/msgsvc/msgsvc/internal/ratelimit"
	"github.com/msgsvc/msgsvc/internal/twilio/sid"
)

const (
	acA = "AC0123456789abcdef0123456789abcdef"
	skA = "SK0123456789abcdef0123456789abcdef"
	acB = "ACfedcba9876543210fedcba9876543210"
)

// twoAccounts is a world with account A (live, an AC and an SK, sender
// 15550001111 and the sender ID Shop) and account B (live, its own AC).
func twoAccounts(t *testing.T) *world {
	w := newWorld(t)
	w.account("acc_a", acA, skA, domain.Live, "15550001111", "Shop")
	w.account("acc_b", acB, "", domain.Live, "15550002222")
	return w
}

func msgsPath(ac string) string { return Base + "Accounts/" + ac + "/Messages.json" }

func send(to, from, body string) url.Values {
	return url.Values{"To": {to}, "From": {from}, "Body": {body}}
}

func TestAuthentication(t *testing.T) {
	w := twoAccounts(t)
	for _, tc := range []struct {
		name         string
		path         string
		user, secret string
		status, code int
	}{
		{"no credentials", msgsPath(acA), "", "", 401, 20003},
		{"wrong token", msgsPath(acA), acA, "nope", 401, 20003},
		{"unknown sid", msgsPath(acA), "AC" + strings.Repeat("9", 32), "x", 401, 20003},
		{"not a sid", msgsPath(acA), "someone", "x", 401, 20003},
		{"another account's token", msgsPath(acA), acB, "token-" + acB, 401, 20003},
		{"an API key for another account's path", msgsPath(acB), skA, "secret-" + skA, 401, 20003},
		{"an API key's secret with its SID as AC", msgsPath(acA), skA, "token-" + acA, 401, 20003},
		{"the account's token", msgsPath(acA), acA, "token-" + acA, 200, 0},
		{"an API key for its parent", msgsPath(acA), skA, "secret-" + skA, 200, 0},
		{"unknown path asks for credentials first", Base + "Accounts/" + acA + "/Calls.json", "", "", 401, 20003},
		{"unknown path", Base + "Accounts/" + acA + "/Calls.json", acA, "token-" + acA, 404, 20404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body, h := w.call("GET", tc.path, tc.user, tc.secret, nil)
			if status != tc.status || code(body) != tc.code {
				t.Fatalf("got %d %v, want %d with code %d", status, body, tc.status, tc.code)
			}
			if status == 401 && !strings.HasPrefix(h.Get("WWW-Authenticate"), "Basic") {
				t.Errorf("401 without a Basic challenge: %v", h)
			}
			if status >= 400 {
				for _, k := range []string{"code", "message", "more_info", "status"} {
					if _, ok := body[k]; !ok {
						t.Errorf("error without %q: %v", k, body)
					}
				}
			}
		})
	}
}

func TestCreateMessage(t *testing.T) {
	w := twoAccounts(t)
	form := send("+447700900123", "+15550001111", "Hello")
	form.Set("StatusCallback", "https://hooks.example.com/status")
	status, body, _ := w.call("POST", msgsPath(acA), skA, "secret-"+skA, form)
	if status != http.StatusCreated {
		t.Fatalf("create: %d %v", status, body)
	}
	if len(w.sends) != 1 {
		t.Fatalf("sends: %d", len(w.sends))
	}
	got := w.sends[0]
	if got.who.Kind != domain.CredentialTwilio || got.who.CredentialID != acA || got.who.Env != domain.Live || got.who.Account.ID != "acc_a" {
		t.Errorf("principal: %+v", got.who)
	}
	want := domain.Origin{Front: domain.FrontTwilio, Twilio: &domain.TwilioOrigin{AccountSid: acA, StatusCallback: "https://hooks.example.com/status"}}
	if got.req.Origin.Front != want.Front || *got.req.Origin.Twilio != *want.Twilio || got.req.CallbackURL != "" {
		t.Errorf("origin %+v %+v, callback %q", got.req.Origin, got.req.Origin.Twilio, got.req.CallbackURL)
	}
	if got.req.Sender != "15550001111" || got.req.Channel != domain.SMS || got.req.Text != "Hello" {
		t.Errorf("request: %+v", got.req)
	}
	m := w.messages[0]
	for k, v := range map[string]any{"sid": sid.FromNative(sid.Message, m.ID), "account_sid": acA, "to": "+447700900123",
		"from": "+15550001111", "body": "Hello", "status": "queued", "num_segments": "1", "num_media": "0",
		"direction": "outbound-api", "api_version": "2010-04-01", "price": "-0.05", "price_unit": "EUR",
		"messaging_service_sid": nil, "error_code": nil, "date_sent": nil, "date_created": "Sat, 28 Nov 2026 10:00:00 +0000"} {
		if body[k] != v {
			t.Errorf("%s = %#v, want %#v", k, body[k], v)
		}
	}
	if body["uri"] != msgsPath(acA)[:len(msgsPath(acA))-len(".json")]+"/"+body["sid"].(string)+".json" {
		t.Errorf("uri %v", body["uri"])
	}

	// The same message, fetched by its SID.
	status, fetched, _ := w.call("GET", Base+"Accounts/"+acA+"/Messages/"+body["sid"].(string)+".json", acA, "token-"+acA, nil)
	if status != 200 || fetched["sid"] != body["sid"] || fetched["body"] != "Hello" {
		t.Fatalf("fetch: %d %v", status, fetched)
	}
}

func TestCreateRefusals(t *testing.T) {
	for _, tc := range []struct {
		name   string
		form   url.Values
		refuse error
		env    domain.Environment
		code   int
		status int
	}{
		{name: "no To", form: url.Values{"From": {"+15550001111"}, "Body": {"x"}}, code: 21604},
		{name: "no From", form: url.Values{"To": {"+447700900123"}, "Body": {"x"}}, code: 21603},
		{name: "messaging service", form: url.Values{"To": {"+447700900123"}, "MessagingServiceSid": {"MG" + strings.Repeat("a", 32)}, "Body": {"x"}}, code: 21701},
		{name: "two media", form: url.Values{"To": {"whatsapp:+447700900123"}, "From": {"whatsapp:+15550001111"}, "Body": {"x"},
			"MediaUrl": {"https://a.example/1.png", "https://a.example/2.png"}}, code: 21623},
		{name: "mixed channels", form: send("whatsapp:+447700900123", "+15550001111", "x"), code: 21910},
		{name: "bad callback", form: url.Values{"To": {"+447700900123"}, "From": {"+15550001111"}, "Body": {"x"}, "StatusCallback": {"not a url"}}, code: 21609},
		{name: "send at without type", form: url.Values{"To": {"+447700900123"}, "From": {"+15550001111"}, "Body": {"x"}, "SendAt": {"2026-11-29T10:00:00Z"}}, code: 35114},
		{name: "send at in the past", form: url.Values{"To": {"+447700900123"}, "From": {"+15550001111"}, "Body": {"x"}, "SendAt": {"2026-11-27T10:00:00Z"}, "ScheduleType": {"fixed"}}, code: 35114},
		{name: "validity not a number", form: url.Values{"To": {"+447700900123"}, "From": {"+15550001111"}, "Body": {"x"}, "ValidityPeriod": {"soon"}}, code: 90007},
		{name: "invalid To", form: send("+1", "+15550001111", "x"), refuse: verr("recipients[0]", domain.FieldInvalid), code: 21211},
		{name: "invalid From", form: send("+447700900123", "!!", "x"), refuse: verr("sender", domain.FieldInvalid), code: 21212},
		{name: "From not the account's", form: send("+447700900123", "+15559999999", "x"), refuse: verr("sender", domain.FieldNotApproved), code: 21606},
		{name: "no body", form: send("+447700900123", "+15550001111", ""), refuse: verr("text", domain.FieldRequired), code: 21602},
		{name: "too long", form: send("+447700900123", "+15550001111", "x"), refuse: verr("text", domain.FieldRange), code: 21617},
		{name: "media on SMS", form: send("+447700900123", "+15550001111", "x"), refuse: verr("content.media", domain.FieldUnavailable), code: 21621},
		{name: "To ranks before Body", form: send("+1", "+15550001111", ""), refuse: &domain.ValidationError{Fields: []domain.FieldError{
			{Path: "text", Code: domain.FieldRequired, Message: "is required"}, {Path: "recipients[0]", Code: domain.FieldInvalid, Message: "bad"}}}, code: 21211},
		{name: "validity out of range", form: send("+447700900123", "+15550001111", "x"), refuse: verr("validity", domain.FieldRange), code: 90007},
		{name: "opted out", form: send("+447700900123", "+15550001111", "x"), refuse: &domain.Refusal{Code: "RECIPIENT_OPTED_OUT", Detail: "stopped"}, code: 21610},
		{name: "balance", form: send("+447700900123", "+15550001111", "x"), refuse: errInsufficient(), code: 20005},
		{name: "magic invalid", form: send("+15005550001", "+15550001111", "x"), env: domain.Test, code: 21211},
		{name: "magic unreachable", form: send("+15005550002", "+15550001111", "x"), env: domain.Test, code: 21612},
		{name: "magic region", form: send("+15005550003", "+15550001111", "x"), env: domain.Test, code: 21408},
		{name: "magic opted out", form: send("+15005550004", "+15550001111", "x"), env: domain.Test, code: 21610},
		{name: "magic not mobile", form: send("+15005550009", "+15550001111", "x"), env: domain.Test, code: 21614},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			env := tc.env
			if env == "" {
				env = domain.Live
			}
			w.account("acc_a", acA, "", env, "15550001111")
			w.refuse = tc.refuse
			status, body, _ := w.call("POST", msgsPath(acA), acA, "token-"+acA, tc.form)
			want := tc.status
			if want == 0 {
				want = 400
			}
			if status != want || code(body) != tc.code {
				t.Fatalf("got %d %v, want %d with %d", status, body, want, tc.code)
			}
			if body["more_info"] != "https://www.twilio.com/docs/errors/"+itoa(tc.code) {
				t.Errorf("more_info %v", body["more_info"])
			}
			if len(w.messages) != 0 {
				t.Errorf("a refused create wrote %d messages", len(w.messages))
			}
		})
	}
}

func verr(path, c string) error {
	return &domain.ValidationError{Fields: []domain.FieldError{{Path: path, Code: c, Message: "is wrong"}}}
}

func TestScheduledCancelAndRedact(t *testing.T) {
	w := twoAccounts(t)
	form := send("+447700900123", "+15550001111", "Later")
	form.Set("SendAt", "2026-11-29T10:00:00Z")
	form.Set("ScheduleType", "fixed")
	status, body, _ := w.call("POST", msgsPath(acA), acA, "token-"+acA, form)
	if status != 201 || body["status"] != "scheduled" {
		t.Fatalf("schedule: %d %v", status, body)
	}
	if !w.sends[0].req.Schedule.Equal(time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("schedule %v", w.sends[0].req.Schedule)
	}
	path := Base + "Accounts/" + acA + "/Messages/" + body["sid"].(string) + ".json"
	// Another account cannot cancel it: its path is not its own, and
	// under its own AccountSid the SID is not found.
	if status, b, _ := w.call("POST", path, acB, "token-"+acB, url.Values{"Status": {"canceled"}}); status != 401 {
		t.Fatalf("B on A's path: %d %v", status, b)
	}
	other := Base + "Accounts/" + acB + "/Messages/" + body["sid"].(string) + ".json"
	for _, m := range []string{"GET", "POST", "DELETE"} {
		if status, b, _ := w.call(m, other, acB, "token-"+acB, url.Values{"Status": {"canceled"}}); status != 404 || code(b) != 20404 {
			t.Fatalf("B %s on its own path with A's SID: %d %v", m, status, b)
		}
	}
	status, body, _ = w.call("POST", path, acA, "token-"+acA, url.Values{"Status": {"canceled"}})
	if status != 200 || body["status"] != "canceled" {
		t.Fatalf("cancel: %d %v", status, body)
	}
	status, body, _ = w.call("POST", path, acA, "token-"+acA, url.Values{"Status": {"canceled"}})
	if status != 400 || code(body) != 30409 {
		t.Fatalf("cancel again: %d %v", status, body)
	}
	if status, body, _ = w.call("POST", path, acA, "token-"+acA, url.Values{"Body": {"new text"}}); status != 400 || code(body) != 20001 {
		t.Fatalf("a new body: %d %v", status, body)
	}
	status, body, _ = w.call("POST", path, acA, "token-"+acA, url.Values{"Body": {""}})
	if status != 200 || body["body"] != "" {
		t.Fatalf("redact: %d %v", status, body)
	}
	// A redacted message stays readable; a deleted one is gone.
	if status, body, _ = w.call("GET", path, acA, "token-"+acA, nil); status != 200 || body["body"] != "" {
		t.Fatalf("fetch redacted: %d %v", status, body)
	}
	if status, body, _ = w.call("DELETE", path, acA, "token-"+acA, nil); status != 204 {
		t.Fatalf("delete: %d %v", status, body)
	}
	for _, m := range []string{"GET", "POST", "DELETE"} {
		if status, body, _ = w.call(m, path, acA, "token-"+acA, url.Values{"Body": {""}}); status != 404 || code(body) != 20404 {
			t.Fatalf("%s after delete: %d %v", m, status, body)
		}
	}
	if !deleted(w.messages[0]) || !strings.HasPrefix(w.messages[0].To, "redacted:") {
		t.Errorf("the deleted message's recipient: %q", w.messages[0].To)
	}
	_, list, _ := w.call("GET", msgsPath(acA), acA, "token-"+acA, nil)
	if n := len(list["messages"].([]any)); n != 0 {
		t.Errorf("the list shows %d messages after the delete", n)
	}
}

// TestListPages walks every page by next_page_uri, as the SDKs do, with
// filters kept from page to page.
func TestListPages(t *testing.T) {
	w := twoAccounts(t)
	var sids []string
	for i := range 7 {
		from := "+15550001111"
		if i%3 == 0 {
			from = "Shop"
		}
		_, b, _ := w.call("POST", msgsPath(acA), acA, "token-"+acA, send("+447700900123", from, "n"))
		sids = append(sids, b["sid"].(string))
	}
	w.call("POST", msgsPath(acB), acB, "token-"+acB, send("+447700900123", "+15550002222", "b"))
	walk := func(first string) []string {
		var got []string
		next := first
		for pages := 0; next != ""; pages++ {
			if pages > 10 {
				t.Fatal("paging does not end")
			}
			status, body, _ := w.call("GET", next, acA, "token-"+acA, nil)
			if status != 200 {
				t.Fatalf("%s: %d %v", next, status, body)
			}
			for _, m := range body["messages"].([]any) {
				got = append(got, m.(map[string]any)["sid"].(string))
			}
			next, _ = body["next_page_uri"].(string)
			if body["first_page_uri"] == nil || body["uri"] == nil || body["page_size"] == nil {
				t.Errorf("envelope: %v", body)
			}
		}
		return got
	}
	got := walk(msgsPath(acA) + "?PageSize=2")
	if len(got) != 7 {
		t.Fatalf("walked %d messages, want 7: %v", len(got), got)
	}
	for i, s := range got {
		if s != sids[6-i] {
			t.Fatalf("page order: %v, want newest first of %v", got, sids)
		}
	}
	shop := walk(msgsPath(acA) + "?PageSize=2&From=Shop")
	if len(shop) != 3 {
		t.Fatalf("From=Shop: %v", shop)
	}
	if s := walk(msgsPath(acA) + "?To=%2B447700900999"); len(s) != 0 {
		t.Fatalf("To filter: %v", s)
	}
	if s := walk(msgsPath(acA) + "?DateSent=2026-11-28"); len(s) != 7 {
		t.Fatalf("DateSent: %v", s)
	}
	if s := walk(msgsPath(acA) + "?DateSent=2026-11-28T00:00:00Z"); len(s) != 7 {
		t.Fatalf("DateSent as a time: %v", s)
	}
	if s := walk(msgsPath(acA) + "?DateSent=2026-11-29"); len(s) != 0 {
		t.Fatalf("DateSent another day: %v", s)
	}
	if s := walk(msgsPath(acA) + "?DateSent%3E=2026-11-28T10:00:00.004Z"); len(s) != 4 {
		t.Fatalf("DateSent>: %v", s)
	}
	if s := walk(msgsPath(acA) + "?DateSent%3C=2026-11-27"); len(s) != 0 {
		t.Fatalf("DateSent<: %v", s)
	}
	if status, body, _ := w.call("GET", msgsPath(acA)+"?PageSize=1001", acA, "token-"+acA, nil); status != 400 {
		t.Fatalf("PageSize 1001: %d %v", status, body)
	}
	if status, body, _ := w.call("GET", msgsPath(acA)+"?PageToken=bogus", acA, "token-"+acA, nil); status != 400 {
		t.Fatalf("a bogus token: %d %v", status, body)
	}
	// Page by number, without a token.
	_, p1, _ := w.call("GET", msgsPath(acA)+"?PageSize=3&Page=1", acA, "token-"+acA, nil)
	if ms := p1["messages"].([]any); len(ms) != 3 || ms[0].(map[string]any)["sid"] != sids[3] {
		t.Fatalf("Page=1: %v", p1)
	}
}

func TestAccountBalanceNumbers(t *testing.T) {
	w := twoAccounts(t)
	status, acct, _ := w.call("GET", Base+"Accounts/"+acA+".json", skA, "secret-"+skA, nil)
	if status != 200 || acct["sid"] != acA || acct["status"] != "active" || acct["auth_token"] != nil || acct["friendly_name"] != "Account acc_a" {
		t.Fatalf("account: %d %v", status, acct)
	}
	status, bal, _ := w.call("GET", Base+"Accounts/"+acA+"/Balance.json", acA, "token-"+acA, nil)
	if status != 200 || bal["balance"] != "12.345" || bal["currency"] != "EUR" || bal["account_sid"] != acA {
		t.Fatalf("balance: %d %v", status, bal)
	}
	for _, p := range []string{".json", "/Balance.json", "/IncomingPhoneNumbers.json", "/Messages.json"} {
		if status, b, _ := w.call("GET", Base+"Accounts/"+acA+p, acB, "token-"+acB, nil); status != 401 || code(b) != 20003 {
			t.Errorf("B reads A's %s: %d %v", p, status, b)
		}
	}

	status, list, _ := w.call("GET", Base+"Accounts/"+acA+"/IncomingPhoneNumbers.json", acA, "token-"+acA, nil)
	nums := list["incoming_phone_numbers"].([]any)
	if status != 200 || len(nums) != 1 {
		t.Fatalf("numbers: %d %v", status, list)
	}
	pn := nums[0].(map[string]any)
	if pn["phone_number"] != "+15550001111" || pn["sms_url"] != nil || pn["sms_method"] != "POST" || pn["sid"] != sid.ForNumber("acc_a", "15550001111") {
		t.Fatalf("number: %v", pn)
	}
	path := Base + "Accounts/" + acA + "/IncomingPhoneNumbers/" + pn["sid"].(string) + ".json"
	status, up, _ := w.call("POST", path, acA, "token-"+acA, url.Values{"SmsUrl": {"https://app.example.com/in"}, "SmsMethod": {"post"}})
	if status != 200 || up["sms_url"] != "https://app.example.com/in" {
		t.Fatalf("set SmsUrl: %d %v", status, up)
	}
	if n := w.numbers["acc_a|15550001111"]; n.SmsURL != "https://app.example.com/in" || n.SmsMethod != "POST" {
		t.Errorf("stored %+v", n)
	}
	if status, b, _ := w.call("POST", path, acA, "token-"+acA, url.Values{"SmsUrl": {"ftp://x"}}); status != 400 || code(b) != 21402 {
		t.Errorf("a bad SmsUrl: %d %v", status, b)
	}
	if status, b, _ := w.call("GET", path, acA, "token-"+acA, nil); status != 200 || b["sms_url"] != "https://app.example.com/in" {
		t.Errorf("fetch: %d %v", status, b)
	}
	// B's own path with A's PN: not found, and nothing set for B.
	other := Base + "Accounts/" + acB + "/IncomingPhoneNumbers/" + pn["sid"].(string) + ".json"
	for _, m := range []string{"GET", "POST"} {
		if status, b, _ := w.call(m, other, acB, "token-"+acB, url.Values{"SmsUrl": {"https://evil.example/"}}); status != 404 || code(b) != 20404 {
			t.Errorf("B %s A's number: %d %v", m, status, b)
		}
	}
	if len(w.numbers) != 1 {
		t.Errorf("numbers set: %v", w.numbers)
	}
	if status, b, _ := w.call("DELETE", path, acA, "token-"+acA, nil); status != 405 || code(b) != 20004 {
		t.Errorf("DELETE a number: %d %v", status, b)
	}
}

func TestRateLimited(t *testing.T) {
	w := twoAccounts(t)
	w.limited = true
	status, body, h := w.call("POST", msgsPath(acA), acA, "token-"+acA, send("+447700900123", "+15550001111", "x"))
	if status != 429 || code(body) != 20429 || h.Get("Retry-After") != "2" {
		t.Fatalf("got %d %v %v", status, body, h)
	}
	if len(w.sends) != 0 {
		t.Error("a limited request was sent")
	}
}

// TestCredentialCache: a credential is read once while the auth counter
// stands; a removed one stops at once when the counter moves.
func TestCredentialCache(t *testing.T) {
	w := twoAccounts(t)
	for range 3 {
		if status, b, _ := w.call("GET", msgsPath(acA), acA, "token-"+acA, nil); status != 200 {
			t.Fatalf("%d %v", status, b)
		}
	}
	for range 3 {
		if status, b, _ := w.call("POST", msgsPath(acA), acA, "token-"+acA, send("+447700900123", "+15550001111", "x")); status != 201 {
			t.Fatalf("%d %v", status, b)
		}
	}
	if w.lookups != 1 {
		t.Errorf("%d lookups for 6 requests", w.lookups)
	}
	w.mu.Lock()
	delete(w.creds, acA)
	w.version++
	w.mu.Unlock()
	if status, b, _ := w.call("GET", msgsPath(acA), acA, "token-"+acA, nil); status != 401 {
		t.Fatalf("a removed credential: %d %v", status, b)
	}
}

// TestStaleCacheSend: a send made on a cached credential that the core
// finds stale is made again on a fresh read.
func TestStaleCacheSend(t *testing.T) {
	w := twoAccounts(t)
	w.call("GET", msgsPath(acA), acA, "token-"+acA, nil) // cache it
	w.refuse = errStale()
	w.mu.Lock()
	w.version++
	w.mu.Unlock()
	status, b, _ := w.call("POST", msgsPath(acA), acA, "token-"+acA, send("+447700900123", "+15550001111", "x"))
	if status != 500 || len(w.sends) != 2 {
		t.Fatalf("got %d %v after %d sends", status, b, len(w.sends))
	}
	if w.sends[0].who.AuthVersion == 0 || w.sends[1].who.AuthVersion != 0 {
		t.Errorf("versions %d then %d", w.sends[0].who.AuthVersion, w.sends[1].who.AuthVersion)
	}
}

func errInsufficient() error { return intake.ErrInsufficientCredits }

func errStale() error { return intake.ErrStaleAuth }

// failures is an address's failure window: limit failures, then refused.
type failures struct{ n map[string]int }

func (f *failures) Count(_ context.Context, key string, limit int) (ratelimit.Decision, error) {
	if f.n[key] >= limit {
		return ratelimit.Decision{Allowed: false, RetryAfter: 30 * time.Second}, nil
	}
	f.n[key]++
	return ratelimit.Decision{Allowed: true}, nil
}

// TestAuthFailuresPerAddress: guessing credentials from one address is
// refused with 20429 once its budget is spent, even with the right ones.
func TestAuthFailuresPerAddress(t *testing.T) {
	w := twoAccounts(t)
	g := &failures{n: map[string]int{}}
	w.h.cfg.Guard, w.h.cfg.AuthFailuresPerMinute = g, 3
	for i := range 3 {
		if status, b, _ := w.call("GET", msgsPath(acA), acA, "guess", nil); status != 401 {
			t.Fatalf("guess %d: %d %v", i, status, b)
		}
	}
	status, b, h := w.call("GET", msgsPath(acA), acA, "guess", nil)
	if status != 429 || code(b) != 20429 || h.Get("Retry-After") != "30" {
		t.Fatalf("past the budget: %d %v %v", status, b, h)
	}
	if status, b, _ := w.call("GET", msgsPath(acA), acA, "token-"+acA, nil); status != 200 {
		t.Fatalf("the right token is not a failure: %d %v", status, b)
	}
	if g.n["ip:192.0.2.1"] != 3 {
		t.Errorf("counted %v", g.n)
	}
}

// TestIPAllowList: an address not on the account's allow-list is refused
// with 20403 whatever the credentials prove.
func TestIPAllowList(t *testing.T) {
	w := twoAccounts(t)
	a := w.accounts["acc_a"]
	a.IPAllowlist = []string{"10.0.0.0/8"}
	w.accounts["acc_a"] = a
	status, b, _ := w.call("GET", msgsPath(acA), acA, "token-"+acA, nil) // httptest's peer is 192.0.2.1
	if status != 403 || code(b) != 20403 {
		t.Fatalf("got %d %v", status, b)
	}
	a.IPAllowlist = []string{"192.0.2.0/24"}
	w.accounts["acc_a"] = a
	w.version++
	if status, b, _ := w.call("GET", msgsPath(acA), acA, "token-"+acA, nil); status != 200 {
		t.Fatalf("allowed: %d %v", status, b)
	}
}

// TestWhatsAppCreate: whatsapp: on To and From sends on WhatsApp, with a
// MediaUrl, and the resource spells both addresses with the prefix.
func TestWhatsAppCreate(t *testing.T) {
	w := twoAccounts(t)
	form := send("whatsapp:+447700900123", "whatsapp:+15550001111", "Look")
	form.Set("MediaUrl", "https://cdn.example.com/a.png")
	form.Set("ValidityPeriod", "600")
	status, body, _ := w.call("POST", msgsPath(acA), acA, "token-"+acA, form)
	if status != 201 {
		t.Fatalf("create: %d %v", status, body)
	}
	req := w.sends[0].req
	if req.Channel != domain.WhatsApp || req.Recipients[0] != "+447700900123" || req.Sender != "15550001111" ||
		req.Content.Media == nil || req.Content.Media.URL != "https://cdn.example.com/a.png" || req.Validity == nil || *req.Validity != 10*time.Minute {
		t.Fatalf("request %+v", req)
	}
	if body["to"] != "whatsapp:+447700900123" || body["from"] != "whatsapp:+15550001111" || body["num_media"] != "1" {
		t.Errorf("resource %v", body)
	}
}
