package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/polltest"
	"github.com/msgsvc/msgsvc/internal/twilio/sid"
)

// twilioLogin is a Twilio credential made straight in the store.
type twilioLogin struct{ sid, token string }

func randomHex(t *testing.T) string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func (e *env) addTwilioLogin(accountID string, env domain.Environment) twilioLogin {
	e.t.Helper()
	l := twilioLogin{sid: sid.Account + randomHex(e.t), token: randomHex(e.t)}
	if err := e.st.CreateTwilioCredential(context.Background(), domain.TwilioCredential{Sid: l.sid, Kind: domain.TwilioAccountSid,
		AccountID: accountID, Env: env, Secret: l.token, CreatedAt: e.clock.Now()}); err != nil {
		e.t.Fatal(err)
	}
	return l
}

func (e *env) approveSMS(accountID, value string) {
	e.t.Helper()
	now := e.clock.Now()
	if err := e.st.AddSender(context.Background(), domain.Sender{ID: id.New(id.Sender, now), AccountID: accountID,
		Channel: domain.SMS, Value: value, Status: domain.SenderApproved, CreatedAt: now}); err != nil {
		e.t.Fatal(err)
	}
}

// twilio calls the Twilio-compatible API as Twilio's SDKs do: Basic
// credentials and a form body.
func (e *env) twilio(method, path string, l twilioLogin, form url.Values) (int, map[string]any) {
	e.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, e.base+path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if l.sid != "" {
		req.SetBasicAuth(l.sid, l.token)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := map[string]any{}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			e.t.Fatalf("%s %s: %d, not JSON: %s", method, path, resp.StatusCode, raw)
		}
	}
	return resp.StatusCode, out
}

func twilioCode(b map[string]any) int {
	c, _ := b["code"].(float64)
	return int(c)
}

// TestTwilioFront: a message created through the Twilio-compatible API is
// the native API's message under another spelling, and a second account's
// credentials reach none of the first's messages, numbers or balance, on
// any path.
func TestTwilioFront(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		e.approveSMS(e.account.ID, "15550001111")
		a := e.addTwilioLogin(e.account.ID, domain.Live)
		other := e.addAccount(NewAccount{Name: "Other", Tier: "enterprise", Credits: 50, Currency: "EUR", Country: "44"})
		e.approveSMS(other.ID, "15550002222")
		b := e.addTwilioLogin(other.ID, domain.Live)
		acct := "/2010-04-01/Accounts/" + a.sid
		mine := "/2010-04-01/Accounts/" + b.sid

		status, m := e.twilio("POST", acct+"/Messages.json", a, url.Values{"To": {"+5511999990021"}, "From": {"+15550001111"},
			"Body": {"private text"}, "StatusCallback": {e.hooks.srv.URL + "/twilio-status"}})
		if status != 201 {
			t.Fatalf("create: %d %v", status, m)
		}
		sm := m["sid"].(string)
		// The message keeps where it came from (its callbacks are signed
		// and posted by it) and no native callback.
		stored, err := e.st.Message(context.Background(), e.account.ID, domain.Live, sid.ToNative(sid.Message, "msg", sm))
		if err != nil {
			t.Fatal(err)
		}
		if tw := stored.Content.Twilio; tw == nil || tw.AccountSid != a.sid || tw.StatusCallback != e.hooks.srv.URL+"/twilio-status" || stored.CallbackURL != "" {
			t.Errorf("stored origin %+v, callback %q", stored.Content.Twilio, stored.CallbackURL)
		}
		if m["account_sid"] != a.sid || m["to"] != "+5511999990021" || m["from"] != "+15550001111" || m["price_unit"] != "USD" {
			t.Errorf("created: %v", m)
		}
		// Both APIs show the same message.
		native := e.do("GET", "/api/v1/integration/messages/"+sid.ToNative(sid.Message, "msg", sm), e.liveKey, nil)
		if native.status != 200 || native.json(t)["to"] != "5511999990021" || native.json(t)["from"] != "15550001111" {
			t.Fatalf("native read of %s: %d %s", sm, native.status, native.body)
		}
		sent := send(t, e, e.liveKey, map[string]any{"to": "5511999990022", "message": "native", "type": "SMS"}).json(t)
		nativeID := sent["messages"].([]any)[0].(map[string]any)["messageId"].(string)
		if status, got := e.twilio("GET", acct+"/Messages/"+sid.FromNative(sid.Message, nativeID)+".json", a, nil); status != 200 || got["body"] != "native" {
			t.Fatalf("Twilio read of a native message: %d %v", status, got)
		}
		if status, got := e.twilio("GET", acct+"/Balance.json", a, nil); status != 200 || got["currency"] != "USD" {
			t.Fatalf("balance: %d %v", status, got)
		}
		status, nums := e.twilio("GET", acct+"/IncomingPhoneNumbers.json", a, nil)
		list, _ := nums["incoming_phone_numbers"].([]any)
		if status != 200 || len(list) != 1 {
			t.Fatalf("numbers: %d %v", status, nums)
		}
		pn := list[0].(map[string]any)["sid"].(string)
		if status, got := e.twilio("POST", acct+"/IncomingPhoneNumbers/"+pn+".json", a, url.Values{"SmsUrl": {e.hooks.srv.URL + "/in"}}); status != 200 {
			t.Fatalf("set SmsUrl: %d %v", status, got)
		}

		// The second account, on the first's paths: 401, never data.
		for _, p := range []struct{ method, path string }{
			{"GET", acct + ".json"}, {"GET", acct + "/Balance.json"}, {"GET", acct + "/Messages.json"},
			{"POST", acct + "/Messages.json"}, {"GET", acct + "/Messages/" + sm + ".json"},
			{"POST", acct + "/Messages/" + sm + ".json"}, {"DELETE", acct + "/Messages/" + sm + ".json"},
			{"GET", acct + "/IncomingPhoneNumbers.json"}, {"GET", acct + "/IncomingPhoneNumbers/" + pn + ".json"},
			{"POST", acct + "/IncomingPhoneNumbers/" + pn + ".json"},
		} {
			status, got := e.twilio(p.method, p.path, b, url.Values{"Body": {""}, "To": {"+5511999990023"}, "From": {"+15550002222"}, "SmsUrl": {"https://evil.example/"}})
			if status != 401 || twilioCode(got) != 20003 || strings.Contains(jsonText(t, got), "private") {
				t.Errorf("B: %s %s answered %d %v", p.method, p.path, status, got)
			}
		}
		// On its own AccountSid, the first's SIDs are not found.
		for _, p := range []struct{ method, path string }{
			{"GET", mine + "/Messages/" + sm + ".json"}, {"POST", mine + "/Messages/" + sm + ".json"},
			{"DELETE", mine + "/Messages/" + sm + ".json"}, {"GET", mine + "/IncomingPhoneNumbers/" + pn + ".json"},
			{"POST", mine + "/IncomingPhoneNumbers/" + pn + ".json"},
		} {
			status, got := e.twilio(p.method, p.path, b, url.Values{"Body": {""}, "SmsUrl": {"https://evil.example/"}})
			if status != 404 || twilioCode(got) != 20404 {
				t.Errorf("B: %s %s answered %d %v", p.method, p.path, status, got)
			}
		}
		status, own := e.twilio("GET", mine+"/Messages.json", b, nil)
		if status != 200 || len(own["messages"].([]any)) != 0 {
			t.Errorf("B's list: %d %v", status, own)
		}
		if status, got := e.twilio("GET", mine+"/Balance.json", b, nil); status != 200 || got["currency"] != "EUR" || got["balance"] != "50.00" {
			t.Errorf("B's balance: %d %v", status, got)
		}
		if status, got := e.twilio("GET", mine+"/IncomingPhoneNumbers.json", b, nil); status != 200 ||
			strings.Contains(jsonText(t, got), "15550001111") {
			t.Errorf("B's numbers: %d %v", status, got)
		}
		if status, got := e.twilio("GET", acct+"/Messages.json", twilioLogin{sid: a.sid, token: b.token}, nil); status != 401 || twilioCode(got) != 20003 {
			t.Errorf("a wrong token: %d %v", status, got)
		}
		// The first account's message was not redacted by any of that.
		if status, got := e.twilio("GET", acct+"/Messages/"+sm+".json", a, nil); status != 200 || got["body"] != "private text" {
			t.Fatalf("after B's attempts: %d %v", status, got)
		}

		// Deleted: gone from the Twilio API, redacted in the native one.
		if status, got := e.twilio("DELETE", acct+"/Messages/"+sm+".json", a, nil); status != 204 {
			t.Fatalf("delete: %d %v", status, got)
		}
		if status, got := e.twilio("GET", acct+"/Messages/"+sm+".json", a, nil); status != 404 || twilioCode(got) != 20404 {
			t.Fatalf("after delete: %d %v", status, got)
		}
		native = e.do("GET", "/api/v1/integration/messages/"+sid.ToNative(sid.Message, "msg", sm), e.liveKey, nil)
		if native.status != 200 || strings.Contains(string(native.body), "private text") || strings.Contains(string(native.body), "5511999990021") {
			t.Fatalf("native read after delete: %d %s", native.status, native.body)
		}
	})
}

func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestTwilioFrontRules: msgsvc's rules answer in Twilio's codes (approved
// senders, opt-outs, invalid numbers, rate limits), test credentials act
// in the test world with Twilio's magic numbers, and a removed credential
// stops at once.
func TestTwilioFrontRules(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	e.approveSMS(e.account.ID, "15550001111")
	live := e.addTwilioLogin(e.account.ID, domain.Live)
	test := e.addTwilioLogin(e.account.ID, domain.Test)
	create := func(l twilioLogin, to, from string) (int, map[string]any) {
		t.Helper()
		return e.twilio("POST", "/2010-04-01/Accounts/"+l.sid+"/Messages.json", l, url.Values{"To": {to}, "From": {from}, "Body": {"hi"}})
	}
	reply(t, e, domain.Live, "5511999990031", "STOP", domain.SMS)
	for _, c := range []struct {
		name     string
		l        twilioLogin
		to, from string
		code     int
	}{
		{"From not approved", live, "+5511999990030", "+15550009999", 21606},
		{"From not a sender", live, "+5511999990030", "+1-555", 21212},
		{"To not a number", live, "+12", "+15550001111", 21211},
		{"opted out", live, "+5511999990031", "+15550001111", 21610},
		{"magic invalid", test, "+15005550001", "+15550001111", 21211},
		{"magic unreachable", test, "+15005550002", "+15550001111", 21612},
		{"magic region", test, "+15005550003", "+15550001111", 21408},
		{"magic opted out", test, "+15005550004", "+15550001111", 21610},
		{"magic not mobile", test, "+15005550009", "+15550001111", 21614},
	} {
		if status, got := create(c.l, c.to, c.from); status != 400 || twilioCode(got) != c.code {
			t.Errorf("%s: %d %v, want 400 with %d", c.name, status, got, c.code)
		}
	}
	// A test credential's message goes to the simulator and is delivered,
	// without spending credits; the live world does not see it.
	status, m := create(test, "+5511999990032", "+15550001111")
	if status != 201 {
		t.Fatalf("test send: %d %v", status, m)
	}
	path := "/2010-04-01/Accounts/" + test.sid + "/Messages/" + m["sid"].(string) + ".json"
	polltest.Until(t, "the test message is delivered", func() bool {
		_, got := e.twilio("GET", path, test, nil)
		return got["status"] == "delivered"
	})
	if status, got := e.twilio("GET", "/2010-04-01/Accounts/"+live.sid+"/Messages/"+m["sid"].(string)+".json", live, nil); status != 404 {
		t.Errorf("the live credential reads a test message: %d %v", status, got)
	}
	if status, got := e.twilio("GET", "/2010-04-01/Accounts/"+live.sid+"/Balance.json", live, nil); status != 200 || got["balance"] != "1000.00" {
		t.Errorf("balance after a test send: %d %v", status, got)
	}

	// The account's rate limit, in Twilio's code.
	if err := e.st.SetLimits(context.Background(), e.account.ID, domain.Limits{TierRPM: 2}); err != nil {
		t.Fatal(err)
	}
	e.clock.StartMinute()
	codes := []int{}
	for range 3 {
		status, got := e.twilio("GET", "/2010-04-01/Accounts/"+live.sid+"/Balance.json", live, nil)
		codes = append(codes, status*100000+twilioCode(got))
	}
	if codes[0] != 200*100000 || codes[1] != 200*100000 || codes[2] != 429*100000+20429 {
		t.Errorf("three requests at 2 a minute answered %v", codes)
	}
	if err := e.st.SetLimits(context.Background(), e.account.ID, domain.Limits{}); err != nil {
		t.Fatal(err)
	}

	// A removed credential stops on the very next request.
	if status, got := e.twilio("GET", "/2010-04-01/Accounts/"+live.sid+"/Messages.json", live, nil); status != 200 {
		t.Fatalf("before removal: %d %v", status, got)
	}
	if err := e.st.DeleteTwilioCredential(context.Background(), e.account.ID, live.sid); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/Messages.json", "/Balance.json"} {
		if status, got := e.twilio("GET", "/2010-04-01/Accounts/"+live.sid+p, live, nil); status != 401 || twilioCode(got) != 20003 {
			t.Errorf("after removal %s: %d %v", p, status, got)
		}
	}
	if status, got := create(live, "+5511999990033", "+15550001111"); status != 401 {
		t.Errorf("a send after removal: %d %v", status, got)
	}
}
