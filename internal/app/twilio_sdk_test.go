package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twilio/twilio-go"
	twclient "github.com/twilio/twilio-go/client"
	twapi "github.com/twilio/twilio-go/rest/api/v2010"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/polltest"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/twilio/sid"
)

// Twilio's own SDKs, unmodified and at their defaults, are the clients of
// these tests: only where they send (the base URL) and the credentials
// change, as docs/twilio.md tells a customer moving from Twilio. What they
// read back is what a customer's code reads; the errors they raise are
// the SDKs' own, carrying Twilio's codes.

// sdkTenant is an account seen through the Twilio-compatible API: its
// account SID and token, and its approved SMS number.
type sdkTenant struct {
	account domain.Account
	sid     string
	token   string
	number  string // E.164
}

// sdkCredential stores an account SID with its token for account, as
// `msgsvc twilio-credentials create` does.
func sdkCredential(t *testing.T, e *env, accountID string, envName domain.Environment) (string, string) {
	t.Helper()
	hexOf := func() string {
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		return hex.EncodeToString(b)
	}
	c := domain.TwilioCredential{Sid: sid.Account + hexOf(), Kind: domain.TwilioAccountSid, AccountID: accountID, Env: envName,
		Secret: hexOf(), Name: "sdk test", CreatedAt: e.clock.Now()}
	if err := e.st.CreateTwilioCredential(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	return c.Sid, c.Secret
}

// sdkTenants makes e's demo account and a second one, each with live
// Twilio credentials (a dev node sends live messages to its simulator)
// and an approved number.
func sdkTenants(t *testing.T, e *env) (a, b sdkTenant) {
	t.Helper()
	ctx := context.Background()
	other := e.addAccount(NewAccount{Name: "Other", Tier: "enterprise", Credits: 500, Currency: "USD", Country: "55"})
	if err := e.st.SetLimits(ctx, other.ID, domain.Limits{}); err != nil {
		t.Fatal(err)
	}
	mk := func(acc domain.Account, digits string) sdkTenant {
		s := domain.Sender{ID: id.New(id.Sender, time.Now()), AccountID: acc.ID, Channel: domain.SMS, Value: digits, CreatedAt: time.Now()}
		if err := e.st.AddSender(ctx, s); err != nil {
			t.Fatal(err)
		}
		ts := sdkTenant{account: acc, number: "+" + digits}
		ts.sid, ts.token = sdkCredential(t, e, acc.ID, domain.Live)
		return ts
	}
	return mk(e.account, "15550001111"), mk(other, "15550002222")
}

// msgsvcTransport is the one change a twilio-go program makes to talk to
// msgsvc: the SDK addresses https://api.twilio.com, and this transport
// sends the same request to the node instead (docs/twilio.md).
type msgsvcTransport struct {
	base *url.URL
	next http.RoundTripper
}

func (m msgsvcTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host, r.Host = m.base.Scheme, m.base.Host, ""
	return m.next.RoundTrip(r)
}

// sdkGoClient is twilio-go's REST client for sid:token, its requests sent
// to base through next (nil: the default transport). Everything else is
// the SDK's default: its own client type, no redirects, a 10 s timeout.
func sdkGoClient(t *testing.T, base, accountSid, token string, next http.RoundTripper) *twilio.RestClient {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	if next == nil {
		next = http.DefaultTransport
	}
	c := &twclient.Client{Credentials: twclient.NewCredentials(accountSid, token),
		HTTPClient: &http.Client{Transport: msgsvcTransport{base: u, next: next}, Timeout: 10 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	c.SetAccountSid(accountSid)
	return twilio.NewRestClientWithParams(twilio.ClientParams{Client: c})
}

// sdkPost is one form post msgsvc made to a customer's URL.
type sdkPost struct {
	path   string
	form   url.Values
	sig    string
	header http.Header
}

// sdkReceiver is a customer's endpoint for status callbacks and
// inbound messages; it validates every post with twilio-go's own
// RequestValidator and the token of the account it belongs to.
type sdkReceiver struct {
	t      *testing.T
	srv    *httptest.Server
	tokens map[string]string // account SID → token

	mu      sync.Mutex
	posts   []sdkPost
	invalid []string
}

func newSDKReceiver(t *testing.T, tokens map[string]string) *sdkReceiver {
	r := &sdkReceiver{t: t, tokens: tokens}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *sdkReceiver) url(path string) string { return r.srv.URL + path }

func (r *sdkReceiver) serve(w http.ResponseWriter, req *http.Request) {
	raw, _ := io.ReadAll(req.Body)
	form, err := url.ParseQuery(string(raw))
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil || req.Method != http.MethodPost || !strings.HasPrefix(req.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		r.invalid = append(r.invalid, fmt.Sprintf("%s %s %q: not a form post (%v)", req.Method, req.URL, req.Header.Get("Content-Type"), err))
		w.WriteHeader(400)
		return
	}
	params := map[string]string{}
	for k, v := range form {
		params[k] = v[0]
	}
	v := twclient.NewRequestValidator(r.tokens[form.Get("AccountSid")])
	full := r.srv.URL + req.URL.RequestURI()
	sig := req.Header.Get("X-Twilio-Signature")
	if sig == "" || !v.Validate(full, params, sig) {
		r.invalid = append(r.invalid, fmt.Sprintf("%s: signature %q does not validate (%v)", full, sig, form))
		w.WriteHeader(403)
		return
	}
	r.posts = append(r.posts, sdkPost{path: req.URL.Path, form: form, sig: sig, header: req.Header.Clone()})
	w.Header().Set("Content-Type", "text/xml")
	_, _ = io.WriteString(w, "<Response></Response>")
}

// find returns the posts to path that match.
func (r *sdkReceiver) find(path string, match func(url.Values) bool) []sdkPost {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []sdkPost
	for _, p := range r.posts {
		if p.path == path && match(p.form) {
			out = append(out, p)
		}
	}
	return out
}

func (r *sdkReceiver) check() {
	r.t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.invalid) > 0 {
		r.t.Fatalf("posts that the SDK's RequestValidator refused or that were no form posts:\n%s", strings.Join(r.invalid, "\n"))
	}
}

// restError asserts that err is twilio-go's RestError with Twilio's code
// (and, when status is not 0, HTTP status).
func restError(t *testing.T, what string, err error, code, status int) {
	t.Helper()
	var re *twclient.TwilioRestError
	if !errors.As(err, &re) {
		t.Fatalf("%s: want the SDK's TwilioRestError with code %d, got %T %v", what, code, err, err)
	}
	if re.Code != code || status != 0 && re.Status != status {
		t.Fatalf("%s: code %d status %d (%s), want code %d status %d", what, re.Code, re.Status, re.Message, code, status)
	}
	if re.MoreInfo == "" || re.Message == "" {
		t.Fatalf("%s: error without message or more_info: %+v", what, re)
	}
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// sdkInbound records a reply from a recipient to one of an account's
// numbers, as the simulator reports one.
func sdkInbound(t *testing.T, e *env, accountID, from, to, body string) {
	t.Helper()
	if _, err := e.srv.tracker.Receive(context.Background(), "simulator", provider.Inbound{AccountID: accountID, Env: domain.Live,
		From: from, To: to, Channel: domain.SMS, Body: body}); err != nil {
		t.Fatal(err)
	}
}

// goSDKRun is everything issue 38 asks of twilio-go, against the node at
// base (the node itself, or a validating proxy in front of it) with
// transport next under the SDK.
func goSDKRun(t *testing.T, e *env, base string, next http.RoundTripper) {
	a, b := sdkTenants(t, e)
	hooks := newSDKReceiver(t, map[string]string{a.sid: a.token, b.sid: b.token})
	ca := sdkGoClient(t, base, a.sid, a.token, next)
	cb := sdkGoClient(t, base, b.sid, b.token, next)

	// The account and its balance.
	acc, err := ca.Api.FetchAccount(a.sid)
	if err != nil {
		t.Fatalf("fetch account: %v", err)
	}
	if deref(acc.Sid) != a.sid || deref(acc.Status) != "active" {
		t.Fatalf("account %+v", acc)
	}
	bal0 := balanceOf(t, ca, a.sid)

	// Send, with a status callback.
	statusURL := hooks.url("/status")
	m, err := ca.Api.CreateMessage((&twapi.CreateMessageParams{}).SetTo("+5511999991001").SetFrom(a.number).
		SetBody("Hello from twilio-go").SetStatusCallback(statusURL))
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	msid := deref(m.Sid)
	if !sid.Valid(sid.Message, msid) || deref(m.AccountSid) != a.sid || deref(m.To) != "+5511999991001" || deref(m.From) != a.number ||
		deref(m.Body) != "Hello from twilio-go" || deref(m.Direction) != "outbound-api" || deref(m.ApiVersion) != "2010-04-01" ||
		deref(m.NumSegments) != "1" || !slices.Contains([]string{"queued", "accepted", "sending", "sent"}, deref(m.Status)) {
		t.Fatalf("created message %s", jsonOf(m))
	}
	// One message, two spellings: the native API finds it by its native id.
	native := sid.ToNative(sid.Message, id.Message, msid)
	if r := e.do("GET", "/api/v1/integration/messages/"+native, e.liveKey, nil); r.status != 200 {
		t.Fatalf("the native API does not find %s (%s): %d %s", msid, native, r.status, r.body)
	}

	// Its status callbacks, each validated by the SDK's RequestValidator.
	defer func() {
		if t.Failed() {
			hooks.mu.Lock()
			t.Logf("posts received: %v; refused: %v", hooks.posts, hooks.invalid)
			hooks.mu.Unlock()
			r := e.do("GET", "/api/v1/integration/messages/"+native, e.liveKey, nil)
			t.Logf("the message natively: %s", r.body)
			sm, err := e.st.Message(context.Background(), a.account.ID, domain.Live, native)
			t.Logf("its stored content: %s %v", jsonOf(sm.Content), err)
		}
	}()
	polltest.For(t, "the delivered status callback", 20*time.Second, func() bool {
		hooks.check()
		return len(hooks.find("/status", func(f url.Values) bool {
			return f.Get("MessageSid") == msid && f.Get("MessageStatus") == "delivered"
		})) > 0
	})
	for _, p := range hooks.find("/status", func(url.Values) bool { return true }) {
		f := p.form
		if f.Get("MessageSid") != msid || f.Get("SmsSid") != msid || f.Get("AccountSid") != a.sid || f.Get("From") != a.number ||
			f.Get("To") != "+5511999991001" || f.Get("SmsStatus") != f.Get("MessageStatus") || f.Get("ApiVersion") != "2010-04-01" {
			t.Fatalf("status callback %v", f)
		}
	}
	got, err := ca.Api.FetchMessage(msid, nil)
	if err != nil {
		t.Fatalf("fetch: %v", err)
	}
	if deref(got.Sid) != msid || deref(got.Status) != "delivered" || deref(got.Body) != "Hello from twilio-go" || got.Price == nil ||
		!strings.HasPrefix(deref(got.Price), "-") || deref(got.PriceUnit) != "USD" {
		t.Fatalf("fetched %s", jsonOf(got))
	}

	// List every page with a small page size: the SDK's auto-paging walks them all.
	sent := []string{msid}
	for i := 0; i < 6; i++ {
		m, err := ca.Api.CreateMessage((&twapi.CreateMessageParams{}).SetTo(fmt.Sprintf("+55119999920%02d", 10+i)).SetFrom(a.number).
			SetBody(fmt.Sprintf("paging %d", i)))
		if err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
		sent = append(sent, deref(m.Sid))
	}
	listed, err := ca.Api.ListMessage((&twapi.ListMessageParams{}).SetPageSize(2))
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	var sids []string
	for _, m := range listed {
		sids = append(sids, deref(m.Sid))
	}
	for _, s := range sent {
		if !slices.Contains(sids, s) {
			t.Fatalf("list with PageSize 2 misses %s: %v", s, sids)
		}
	}
	if dup := duplicates(sids); len(dup) > 0 || len(sids) != len(sent) {
		t.Fatalf("list: %d messages (%v), duplicates %v; sent %d", len(sids), sids, dup, len(sent))
	}
	pages := 0
	stream, errs := ca.Api.StreamMessage((&twapi.ListMessageParams{}).SetPageSize(3).SetTo("+5511999991001"))
	for m := range stream {
		pages++
		if deref(m.Sid) != msid {
			t.Fatalf("To filter: %s", jsonOf(m))
		}
	}
	if err := <-errs; err != nil || pages != 1 {
		t.Fatalf("stream with To: %d messages, %v", pages, err)
	}

	// Redact.
	red, err := ca.Api.UpdateMessage(msid, (&twapi.UpdateMessageParams{}).SetBody(""))
	if err != nil {
		t.Fatalf("redact: %v", err)
	}
	if deref(red.Body) != "" {
		t.Fatalf("redacted %s", jsonOf(red))
	}
	if got, err := ca.Api.FetchMessage(msid, nil); err != nil || deref(got.Body) != "" {
		t.Fatalf("fetch after redaction: %v %s", err, jsonOf(got))
	}

	// Schedule, then cancel.
	sch, err := ca.Api.CreateMessage((&twapi.CreateMessageParams{}).SetTo("+5511999991002").SetFrom(a.number).SetBody("later").
		SetSendAt(e.clock.Now().Add(2 * time.Hour)).SetScheduleType("fixed"))
	if err != nil {
		t.Fatalf("schedule: %v", err)
	}
	if deref(sch.Status) != "scheduled" {
		t.Fatalf("scheduled %s", jsonOf(sch))
	}
	can, err := ca.Api.UpdateMessage(deref(sch.Sid), (&twapi.UpdateMessageParams{}).SetStatus("canceled"))
	if err != nil {
		t.Fatalf("cancel: %v", err)
	}
	if deref(can.Status) != "canceled" {
		t.Fatalf("canceled %s", jsonOf(can))
	}

	// The balance went down by what the messages cost.
	if bal := balanceOf(t, ca, a.sid); bal >= bal0 {
		t.Fatalf("balance %v after sending, was %v", bal, bal0)
	}

	// The number's SmsUrl receives a reply, signed.
	nums, err := ca.Api.ListIncomingPhoneNumber(nil)
	if err != nil {
		t.Fatalf("numbers: %v", err)
	}
	var pn string
	for _, n := range nums {
		if deref(n.PhoneNumber) == a.number {
			pn = deref(n.Sid)
		}
		if deref(n.PhoneNumber) == b.number {
			t.Fatalf("the second account's number is listed to the first: %s", jsonOf(n))
		}
	}
	if !sid.Valid(sid.Number, pn) {
		t.Fatalf("%s not among the account's numbers: %s", a.number, jsonOf(nums))
	}
	smsURL := hooks.url("/sms")
	upd, err := ca.Api.UpdateIncomingPhoneNumber(pn, (&twapi.UpdateIncomingPhoneNumberParams{}).SetSmsUrl(smsURL))
	if err != nil {
		t.Fatalf("set SmsUrl: %v", err)
	}
	if deref(upd.SmsUrl) != smsURL || deref(upd.Sid) != pn {
		t.Fatalf("number after update %s", jsonOf(upd))
	}
	if n, err := ca.Api.FetchIncomingPhoneNumber(pn, nil); err != nil || deref(n.SmsUrl) != smsURL {
		t.Fatalf("fetch number: %v %s", err, jsonOf(n))
	}
	sdkInbound(t, e, a.account.ID, "+5511999991001", a.number, "Thanks, got it")
	var in url.Values
	polltest.For(t, "the reply at the number's SmsUrl", 20*time.Second, func() bool {
		hooks.check()
		ps := hooks.find("/sms", func(f url.Values) bool { return f.Get("Body") == "Thanks, got it" })
		if len(ps) > 0 {
			in = ps[0].form
		}
		return in != nil
	})
	if in.Get("AccountSid") != a.sid || in.Get("From") != "+5511999991001" || in.Get("To") != a.number || in.Get("NumMedia") != "0" ||
		!sid.Valid(sid.Message, in.Get("MessageSid")) {
		t.Fatalf("inbound post %v", in)
	}

	// Errors, each the SDK's own exception with Twilio's code.
	_, err = ca.Api.CreateMessage((&twapi.CreateMessageParams{}).SetTo("12").SetFrom(a.number).SetBody("x"))
	restError(t, "invalid To", err, 21211, 400)
	_, err = ca.Api.CreateMessage((&twapi.CreateMessageParams{}).SetTo("+5511999991003").SetFrom("+15559999999").SetBody("x"))
	restError(t, "a From that is not the account's", err, 21606, 400)
	_, err = ca.Api.CreateMessage((&twapi.CreateMessageParams{}).SetTo("+5511999991004").SetFrom(b.number).SetBody("x"))
	restError(t, "the second account's number as From", err, 21606, 400)
	sdkInbound(t, e, a.account.ID, "+5511999991005", a.number, "STOP")
	_, err = ca.Api.CreateMessage((&twapi.CreateMessageParams{}).SetTo("+5511999991005").SetFrom(a.number).SetBody("x"))
	restError(t, "an opted-out recipient", err, 21610, 400)
	wrong := sdkGoClient(t, base, a.sid, strings.Repeat("0", 32), next)
	_, err = wrong.Api.FetchMessage(msid, nil)
	restError(t, "a wrong token", err, 20003, 401)
	_, err = wrong.Api.CreateMessage((&twapi.CreateMessageParams{}).SetTo("+5511999991006").SetFrom(a.number).SetBody("x"))
	restError(t, "a send with a wrong token", err, 20003, 401)

	// A second tenant reaches nothing of the first: not by its own
	// AccountSid with the first's SIDs, nor by the first's AccountSid.
	_, err = cb.Api.FetchMessage(msid, nil)
	restError(t, "another account's message", err, 20404, 404)
	_, err = cb.Api.UpdateMessage(deref(sch.Sid), (&twapi.UpdateMessageParams{}).SetBody(""))
	restError(t, "redacting another account's message", err, 20404, 404)
	err = cb.Api.DeleteMessage(sent[1], nil)
	restError(t, "deleting another account's message", err, 20404, 404)
	_, err = cb.Api.FetchIncomingPhoneNumber(pn, nil)
	restError(t, "another account's number", err, 20404, 404)
	_, err = cb.Api.UpdateIncomingPhoneNumber(pn, (&twapi.UpdateIncomingPhoneNumberParams{}).SetSmsUrl(hooks.url("/stolen")))
	restError(t, "another account's number's SmsUrl", err, 20404, 404)
	if mine, err := cb.Api.ListMessage(nil); err != nil || len(mine) != 0 {
		t.Fatalf("the second account lists %d messages (%v)", len(mine), err)
	}
	crossed := map[string]error{}
	_, crossed["fetch account"] = cb.Api.FetchAccount(a.sid)
	_, crossed["balance"] = cb.Api.FetchBalance((&twapi.FetchBalanceParams{}).SetPathAccountSid(a.sid))
	_, crossed["list messages"] = cb.Api.ListMessage((&twapi.ListMessageParams{}).SetPathAccountSid(a.sid))
	_, crossed["fetch message"] = cb.Api.FetchMessage(msid, (&twapi.FetchMessageParams{}).SetPathAccountSid(a.sid))
	_, crossed["create message"] = cb.Api.CreateMessage((&twapi.CreateMessageParams{}).SetPathAccountSid(a.sid).SetTo("+5511999991007").SetFrom(a.number).SetBody("x"))
	_, crossed["numbers"] = cb.Api.ListIncomingPhoneNumber((&twapi.ListIncomingPhoneNumberParams{}).SetPathAccountSid(a.sid))
	_, crossed["update number"] = cb.Api.UpdateIncomingPhoneNumber(pn, (&twapi.UpdateIncomingPhoneNumberParams{}).SetPathAccountSid(a.sid).SetSmsUrl(hooks.url("/stolen")))
	crossed["delete message"] = cb.Api.DeleteMessage(sent[1], (&twapi.DeleteMessageParams{}).SetPathAccountSid(a.sid))
	for what, err := range crossed {
		var re *twclient.TwilioRestError
		if !errors.As(err, &re) || (re.Code != 20003 && re.Code != 20404) {
			t.Fatalf("the second account's credentials with the first's AccountSid (%s): %v", what, err)
		}
	}
	if bb := balanceOf(t, cb, b.sid); bb != 500 {
		t.Fatalf("the second account's balance is %v, want its own 500", bb)
	}
	if got, err := ca.Api.FetchMessage(sent[1], nil); err != nil || deref(got.Body) != "paging 0" {
		t.Fatalf("the first account's message after the second's attempts: %v %s", err, jsonOf(got))
	}
	if n, err := ca.Api.FetchIncomingPhoneNumber(pn, nil); err != nil || deref(n.SmsUrl) != smsURL {
		t.Fatalf("the first account's number after the second's attempts: %v %s", err, jsonOf(n))
	}

	// A Twilio API key (SK… and its secret, with the account SID given
	// apart) acts for its account as the SDK sends it.
	key := domain.TwilioCredential{Sid: sid.APIKey + strings.Repeat("5", 32), Kind: domain.TwilioAPIKey, AccountID: a.account.ID,
		Env: domain.Live, Secret: strings.Repeat("6", 32), Parent: a.sid, Name: "sdk key", CreatedAt: e.clock.Now()}
	if err := e.st.CreateTwilioCredential(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	kc := &twclient.Client{Credentials: twclient.NewCredentials(key.Sid, key.Secret),
		HTTPClient: &http.Client{Transport: msgsvcTransport{base: mustURL(t, base), next: orDefault(next)}, Timeout: 10 * time.Second}}
	kc.SetAccountSid(a.sid)
	withKey := twilio.NewRestClientWithParams(twilio.ClientParams{Client: kc})
	if got, err := withKey.Api.FetchMessage(sent[2], nil); err != nil || deref(got.Sid) != sent[2] {
		t.Fatalf("fetch with an API key: %v %s", err, jsonOf(got))
	}
	if m, err := withKey.Api.CreateMessage((&twapi.CreateMessageParams{}).SetTo("+5511999991008").SetFrom(a.number).SetBody("by key")); err != nil ||
		deref(m.AccountSid) != a.sid {
		t.Fatalf("send with an API key: %v %s", err, jsonOf(m))
	}
	_, err = cb.Api.FetchMessage(msid, (&twapi.FetchMessageParams{}).SetPathAccountSid(b.sid))
	restError(t, "the second account fetching the first's message in its own account", err, 20404, 404)

	// Delete: gone from then on.
	if err := ca.Api.DeleteMessage(sent[1], nil); err != nil {
		t.Fatalf("delete: %v", err)
	}
	_, err = ca.Api.FetchMessage(sent[1], nil)
	restError(t, "a deleted message", err, 20404, 404)
	hooks.check()
	if len(hooks.find("/stolen", func(url.Values) bool { return true })) > 0 {
		t.Fatal("a post reached the URL the second account tried to set")
	}
}

func orDefault(rt http.RoundTripper) http.RoundTripper {
	if rt == nil {
		return http.DefaultTransport
	}
	return rt
}

func balanceOf(t *testing.T, c *twilio.RestClient, accountSid string) float64 {
	t.Helper()
	bal, err := c.Api.FetchBalance((&twapi.FetchBalanceParams{}).SetPathAccountSid(accountSid))
	if err != nil {
		t.Fatalf("balance: %v", err)
	}
	v, err := strconv.ParseFloat(deref(bal.Balance), 64)
	if err != nil || deref(bal.Currency) != "USD" || deref(bal.AccountSid) != accountSid {
		t.Fatalf("balance %s (%v)", jsonOf(bal), err)
	}
	return v
}

func duplicates(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range s {
		if seen[v] {
			out = append(out, v)
		}
		seen[v] = true
	}
	return out
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestTwilioGoSDK runs twilio-go v1.31.0 against a node.
func TestTwilioGoSDK(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		goSDKRun(t, e, e.base, nil)
	})
}

// prismEnv names the Prism binary (@stoplight/prism-cli 5.16.0) that
// validates every response of the SDK runs against Twilio's document.
const prismEnv = "MSGSVC_TEST_PRISM"

// twilioDocument is Twilio's OpenAPI document of the 2010-04-01 API, in
// the development layout (../shared/peers/twilio, see its README).
func twilioDocument(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("MSGSVC_TEST_TWILIO_SPEC"); p != "" {
		return p
	}
	_, file, _, _ := runtime.Caller(0)
	p := filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "peers", "twilio", "twilio_api_v2010.json")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("Twilio's document is not at %s (set MSGSVC_TEST_TWILIO_SPEC): %v", p, err)
	}
	return p
}

// violation is one entry of Prism's sl-violations header.
type violation struct {
	Location []string `json:"location"`
	Severity string   `json:"severity"`
	Code     any      `json:"code"`
	Message  string   `json:"message"`
}

// prismProxy is Prism in front of a node, validating every request and
// response against Twilio's document (--errors: an invalid one is
// answered with an error instead of being passed on).
type prismProxy struct {
	base string
	log  *lockedBuffer

	mu         sync.Mutex
	violations []string
	exchanges  int
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func startPrism(t *testing.T, upstream string) *prismProxy {
	t.Helper()
	bin := os.Getenv(prismEnv)
	if bin == "" {
		t.Skip("set " + prismEnv + " to the prism binary (npm install @stoplight/prism-cli@5.16.0; node_modules/.bin/prism) to validate the SDK runs against Twilio's document")
	}
	spec := pageURIsAsReferences(t, twilioDocument(t))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	p := &prismProxy{base: fmt.Sprintf("http://127.0.0.1:%d", port), log: &lockedBuffer{}}
	cmd := exec.Command(bin, "proxy", "-h", "127.0.0.1", "-p", strconv.Itoa(port), "--errors", spec, upstream)
	cmd.Stdout, cmd.Stderr = p.log, p.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("prism's log:\n%s", tail(p.log.String(), 8000))
			p.mu.Lock()
			t.Logf("violations so far:\n%s", strings.Join(p.violations, "\n"))
			p.mu.Unlock()
		}
	})
	polltest.For(t, "prism listening", 120*time.Second, func() bool {
		select {
		case <-exited:
			t.Fatalf("prism exited:\n%s", p.log.String())
		default:
		}
		c, err := net.Dial("tcp", ln.Addr().String())
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return p
}

// pageURIs are the page envelope's links. Twilio's document types them
// `format: uri` (an absolute URI, with a scheme), yet its own examples of
// them, Twilio's API and the SDKs' paging all use references relative to
// the API's host ("/2010-04-01/Accounts/…/Messages.json?Page=1…"): the SDKs
// prepend their base URL, so an absolute one would break every SDK's
// paging.
var pageURIs = []string{"uri", "first_page_uri", "next_page_uri", "previous_page_uri"}

// pageURIsAsReferences writes a copy of Twilio's document in which those
// four properties of the list responses are `format: uri-reference`, the
// format their examples in the document match; nothing else changes, and
// the test says how many properties it changed.
func pageURIsAsReferences(t *testing.T, spec string) string {
	t.Helper()
	raw, err := os.ReadFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("Twilio's document: %v", err)
	}
	changed := 0
	paths, _ := doc["paths"].(map[string]any)
	for _, item := range paths {
		get, _ := item.(map[string]any)["get"].(map[string]any)
		resp, _ := get["responses"].(map[string]any)
		ok, _ := resp["200"].(map[string]any)
		content, _ := ok["content"].(map[string]any)
		media, _ := content["application/json"].(map[string]any)
		schema, _ := media["schema"].(map[string]any)
		props, _ := schema["properties"].(map[string]any)
		if props == nil || props["first_page_uri"] == nil {
			continue // not a page envelope
		}
		for _, name := range pageURIs {
			if p, _ := props[name].(map[string]any); p != nil && p["format"] == "uri" {
				p["format"] = "uri-reference"
				changed++
			}
		}
	}
	if changed == 0 {
		t.Fatal("no page envelope with format uri links in Twilio's document: has it changed?")
	}
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "twilio_api_v2010.json")
	if err := os.WriteFile(dst, out, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Logf("Twilio's document with %d page links as uri-reference (the format of its own examples)", changed)
	return dst
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// RoundTrip records each answer's violations: a response that breaks the
// document at error level (Prism answers 500 with VIOLATIONS for it), a
// request Prism refused (422), and every entry of sl-violations but one:
// a 4xx answer's status itself, which Twilio's document never lists (it
// describes no error responses) and which Prism marks as a warning.
func (p *prismProxy) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.exchanges++
	what := r.Method + " " + r.URL.RequestURI()
	if h := resp.Header.Get("sl-violations"); h != "" {
		var vs []violation
		if err := json.Unmarshal([]byte(h), &vs); err != nil {
			p.violations = append(p.violations, what+": "+h)
		}
		for _, v := range vs {
			if resp.StatusCode >= 400 && resp.StatusCode < 500 && v.Severity == "Warning" &&
				strings.HasPrefix(v.Message, "Unable to match the returned status code") {
				continue
			}
			p.violations = append(p.violations, fmt.Sprintf("%s → %d: %s %s: %s", what, resp.StatusCode, v.Severity, strings.Join(v.Location, "."), v.Message))
		}
	}
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/problem+json") {
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(strings.NewReader(string(raw)))
		p.violations = append(p.violations, fmt.Sprintf("%s → %d from prism: %s", what, resp.StatusCode, raw))
	}
	return resp, nil
}

func (p *prismProxy) check(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.violations) > 0 {
		t.Fatalf("%d of %d exchanges break Twilio's document:\n%s", len(p.violations), p.exchanges, strings.Join(p.violations, "\n"))
	}
	if p.exchanges == 0 {
		t.Fatal("nothing went through prism")
	}
	t.Logf("%d exchanges through prism, no violation", p.exchanges)
}

// TestTwilioGoSDKThroughPrism is TestTwilioGoSDK with Prism between the
// SDK and the node: every request and response is checked against
// Twilio's own OpenAPI document.
func TestTwilioGoSDKThroughPrism(t *testing.T) {
	if os.Getenv(prismEnv) == "" {
		t.Skip("set " + prismEnv + " to the prism binary (npm install @stoplight/prism-cli@5.16.0; node_modules/.bin/prism) to validate the SDK run against Twilio's document")
	}
	e := newEnv(t, "sqlite", envOptions{})
	p := startPrism(t, e.base)
	goSDKRun(t, e, p.base, p)
	p.check(t)
}

// nodeEnv names a node_modules folder holding npm's twilio 6.2.0.
const nodeEnv = "MSGSVC_TEST_TWILIO_NODE"

// nodeSDKRun runs testdata/twilio-node/sdk.cjs (Twilio's Node SDK through
// the same checks as goSDKRun) against base, with a's and b's
// credentials; the script asks the test to record simulated replies.
func nodeSDKRun(t *testing.T, e *env, base string) {
	t.Helper()
	modules := os.Getenv(nodeEnv)
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("%s is set but node is not on PATH: %v", nodeEnv, err)
	}
	a, b := sdkTenants(t, e)
	ctl := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Account, From, To, Body string }
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || r.URL.Path != "/inbound" {
			http.Error(w, fmt.Sprintf("bad control request %s: %v", r.URL.Path, err), 400)
			return
		}
		acc := a.account.ID
		if in.Account == "b" {
			acc = b.account.ID
		}
		if _, err := e.srv.tracker.Receive(r.Context(), "simulator", provider.Inbound{AccountID: acc, Env: domain.Live,
			From: in.From, To: in.To, Channel: domain.SMS, Body: in.Body}); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(ctl.Close)
	cred := func(s sdkTenant) map[string]string {
		return map[string]string{"sid": s.sid, "token": s.token, "number": s.number}
	}
	key := domain.TwilioCredential{Sid: sid.APIKey + strings.Repeat("7", 32), Kind: domain.TwilioAPIKey, AccountID: a.account.ID,
		Env: domain.Live, Secret: strings.Repeat("8", 32), Parent: a.sid, Name: "sdk key", CreatedAt: e.clock.Now()}
	if err := e.st.CreateTwilioCredential(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	runArg, _ := json.Marshal(map[string]any{"base": base, "control": ctl.URL, "a": cred(a), "b": cred(b),
		"key": map[string]string{"sid": key.Sid, "secret": key.Secret}})
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "testdata", "twilio-node", "sdk.cjs")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeBin, script)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules, "SDK_RUN="+string(runArg))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("twilio-node run failed (%v):\n%s", err, out)
	}
	t.Logf("twilio-node: %s", strings.TrimSpace(string(out)))
}

func needNodeSDK(t *testing.T) {
	t.Helper()
	if os.Getenv(nodeEnv) == "" {
		t.Skip("set " + nodeEnv + " to a node_modules folder with npm's twilio@6.2.0 (npm install --prefix DIR twilio@6.2.0; DIR/node_modules) to run Twilio's Node SDK against a node")
	}
}

// TestTwilioNodeSDK runs npm's twilio 6.2.0 against a node.
func TestTwilioNodeSDK(t *testing.T) {
	needNodeSDK(t)
	e := newEnv(t, "sqlite", envOptions{})
	nodeSDKRun(t, e, e.base)
}

// TestTwilioNodeSDKThroughPrism is TestTwilioNodeSDK with Prism between
// the SDK and the node, validating against Twilio's document (the script
// fails on any violation Prism reports).
func TestTwilioNodeSDKThroughPrism(t *testing.T) {
	needNodeSDK(t)
	if os.Getenv(prismEnv) == "" {
		t.Skip("set " + prismEnv + " to the prism binary (npm install @stoplight/prism-cli@5.16.0; node_modules/.bin/prism) to validate the SDK run against Twilio's document")
	}
	e := newEnv(t, "sqlite", envOptions{})
	p := startPrism(t, e.base)
	nodeSDKRun(t, e, p.base)
	if strings.Contains(p.log.String(), "Violation:") {
		for _, line := range strings.Split(p.log.String(), "\n") {
			if strings.Contains(line, "Violation:") && !strings.Contains(line, "Unable to match the returned status code") {
				t.Errorf("prism: %s", line)
			}
		}
	}
}
