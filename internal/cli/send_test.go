package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/msgsvc/msgsvc/client"
	"github.com/msgsvc/msgsvc/internal/app"
	"github.com/msgsvc/msgsvc/internal/nodetest"
	"github.com/msgsvc/msgsvc/internal/polltest"
	"github.com/msgsvc/msgsvc/internal/webhook"
)

// msgsvc send talks to a node through its API, follows the message with
// --wait, and says what to do when something is wrong.
func TestSendCommand(t *testing.T) {
	e := startNode(t)
	api := []string{"--url", e.base, "--key", e.testKey}
	out, err := runCmd(t, "send", append(api, "--to", "5511999990000", "--message", "Hello", "--wait")...)
	if err != nil || !strings.Contains(out, "accepted msg_") || !strings.Contains(out, " DELIVERED") || strings.Contains(out, "\033[") {
		t.Fatalf("send --wait: %v\n%s", err, out)
	}
	out, err = runCmd(t, "send", append(api, "--to", "5511999990001,5511999990000", "--message", "Hello", "--wait")...)
	if err == nil || !strings.Contains(err.Error(), "INVALID_NUMBER") || strings.Count(out, "accepted msg_") != 2 {
		t.Fatalf("a batch with a failing number: %v\n%s", err, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--url", e.base, "--to", "5511999990000", "--message", "x", "--key", ""}, "pass --key svc_test_"},
		{[]string{"--url", "http://127.0.0.1:1", "--key", e.testKey, "--to", "5511999990000", "--message", "x"}, "is `msgsvc dev` running?"},
		{append(api, "--to", "123", "--message", "x"), "--to: must be"},
		{append(api, "--to", "5511999990000"), "--to and --message are required"},
		{[]string{"--url", e.base, "--key", "svc_test_" + strings.Repeat("x", 40), "--to", "5511999990000", "--message", "x"}, "msgsvc key create"},
	} {
		if _, err := runCmd(t, "send", c.args...); err == nil || !strings.Contains(err.Error(), c.want) ||
			strings.HasPrefix(err.Error(), "msgsvc: ") {
			t.Errorf("%v: %v, want it to say %q", c.args, err, c.want)
		}
	}
}

// msgsvc listen verifies, prints and forwards the webhooks of a real send.
func TestListenCommand(t *testing.T) {
	e := startNode(t)
	forwarded := make(chan http.Header, 10)
	appSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		wh, _ := standardwebhooks.NewWebhook(e.account.WebhookSecret)
		if wh.Verify(body, r.Header) != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		forwarded <- r.Header.Clone()
		w.WriteHeader(http.StatusAccepted)
	}))
	defer appSrv.Close()

	var out nodetest.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- runListen(ctx, []string{"--addr", "127.0.0.1:0", "--secret", e.account.WebhookSecret, "--forward-to", appSrv.URL}, &out, io.Discard)
	}()
	var hooks string
	polltest.For(t, "the listener", 5*time.Second, func() bool {
		m := regexp.MustCompile(`http://[0-9.:]+/hooks`).FindString(out.String())
		hooks = m
		return m != ""
	})
	mid := e.send(t, client.SendRequest{To: "5511999990000", Message: "hi", Type: "SMS", CallbackURL: hooks})
	// Webhooks are posted concurrently: SENT may come after DELIVERED.
	polltest.For(t, "SENT and DELIVERED in the listener", 10*time.Second, func() bool {
		text := out.String()
		return strings.Contains(text, "DELIVERED") && strings.Contains(text, "SENT ")
	})
	text := out.String()
	if !strings.Contains(text, mid) || !strings.Contains(text, "SENT") || !strings.Contains(text, "answered 202") || strings.Contains(text, "\033[") {
		t.Errorf("listen printed:\n%s", text)
	}
	select {
	case h := <-forwarded:
		if !strings.HasPrefix(h.Get("webhook-id"), "evt_") || h.Get("User-Agent") != "msgsvc/"+app.Version {
			t.Errorf("forwarded headers %v", h)
		}
	case <-time.After(5 * time.Second):
		t.Error("nothing was forwarded")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("listen stopped with %v", err)
	}
}

// What the listener points out: a wrong secret, a retry of an event it
// already has, a status that arrives after a later one.
func TestListenerNotes(t *testing.T) {
	secret, _ := webhook.NewSecret()
	key, _ := webhook.DecodeSecret(secret)
	var out nodetest.Buffer
	l := newListener(&out, false, secret, "")
	post := func(id, status string, key []byte) int {
		body := `{"event":"delivery_status","campaignId":"cmp_1","messageId":"msg_1","phone":"5511999990000","status":"` + status +
			`","timestamp":"2030-01-01T00:00:00.000Z","provider":"simulator","errorCode":null,"errorMessage":null}`
		ts := time.Now().Unix()
		r := httptest.NewRequest(http.MethodPost, "/hooks", strings.NewReader(body))
		r.Header.Set("webhook-id", id)
		r.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
		r.Header.Set("webhook-signature", webhook.Sign(key, id, ts, []byte(body)))
		w := httptest.NewRecorder()
		l.ServeHTTP(w, r)
		return w.Code
	}
	other, _ := webhook.NewSecret()
	otherKey, _ := webhook.DecodeSecret(other)
	for _, step := range []struct {
		id, status string
		key        []byte
		code       int
		note       string
	}{
		{"evt_1", "DELIVERED", key, 204, "DELIVERED"},
		{"evt_1", "DELIVERED", key, 204, "again: a retry"},
		{"evt_0", "SENT", key, 204, "arrived after DELIVERED"},
		{"evt_2", "READ", otherKey, 401, "REFUSED"},
	} {
		before := len(out.String())
		if code := post(step.id, step.status, step.key); code != step.code {
			t.Errorf("%s %s: answered %d, want %d", step.id, step.status, code, step.code)
		}
		if line := out.String()[before:]; !strings.Contains(line, step.note) {
			t.Errorf("%s %s: printed %q, want %q", step.id, step.status, line, step.note)
		}
	}
}

// fakeNode answers a send and then, for msg_1, the statuses in turn; an
// entry of 429 is a RATE_LIMITED refusal with Retry-After: 7.
func fakeNode(t *testing.T, answers ...any) (*httptest.Server, *int) {
	t.Helper()
	var mu sync.Mutex
	gets := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.Method == http.MethodPost {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusAccepted)
			_, _ = io.WriteString(w, `{"campaignId":"cmp_1","status":"SENDING","credits":1,"messages":[{"messageId":"msg_1",`+
				`"to":"5511999990000","status":"SENDING","segments":1,"encoding":"GSM-7","credits":1}]}`)
			return
		}
		a := answers[min(gets, len(answers)-1)]
		gets++
		switch a := a.(type) {
		case int:
			w.Header().Set("Content-Type", "application/problem+json")
			if a == http.StatusTooManyRequests {
				w.Header().Set("Retry-After", "7")
				w.WriteHeader(a)
				_, _ = io.WriteString(w, `{"status":429,"code":"RATE_LIMITED","detail":"Too many requests."}`)
				return
			}
			w.WriteHeader(a)
			_, _ = io.WriteString(w, `{"status":`+strconv.Itoa(a)+`,"code":"NOT_FOUND","detail":"No such message."}`)
		case string:
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"messageId":"msg_1","campaignId":"cmp_1","to":"5511999990000","type":"SMS","channel":"SMS",`+
				`"status":"`+a+`","segments":1,"encoding":"GSM-7","credits":1,"scheduledAt":null,"dueAt":null,`+
				`"createdAt":"2026-11-21T10:00:00.000Z","updatedAt":"2026-11-21T10:00:00.000Z","history":[]}`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &gets
}

// send --wait waits out a 429 for its Retry-After instead of failing, and
// slows its polling down, so that even a Free account's 10 requests a
// minute are enough to follow a slow message.
func TestSendWaitBacksOff(t *testing.T) {
	srv, gets := fakeNode(t, "SENDING", 429, "SENT", "SENT", "SENT", "SENT", "SENT", "SENT", "SENT", "DELIVERED")
	c := client.New(srv.URL, "svc_test_x", client.WithRetries(0))
	out := &client.SendResponse{Messages: []client.AcceptedMessage{{MessageID: "msg_1"}}}
	var slept []time.Duration
	final, err := follow(context.Background(), c, out, newProgress(io.Discard, false), func(_ context.Context, d time.Duration) {
		slept = append(slept, d)
	})
	if err != nil || len(final) != 1 || final[0].Status != "DELIVERED" {
		t.Fatalf("follow: %v %+v", err, final)
	}
	if len(slept) < 2 || slept[1] != 7*time.Second {
		t.Errorf("after the 429 it slept %v, want Retry-After's 7s", slept)
	}
	if *gets != 10 || slept[len(slept)-1] > maxPoll {
		t.Errorf("%d requests (pauses %v)", *gets, slept)
	}
	// Without the 429: the send and the polls of any minute stay within
	// the Free tier's 10 requests.
	slept = nil
	srv, _ = fakeNode(t, "SENDING", "SENT", "SENT", "SENT", "SENT", "SENT", "SENT", "SENT", "SENT", "SENT", "SENT", "SENT", "SENT", "DELIVERED")
	c = client.New(srv.URL, "svc_test_x", client.WithRetries(0))
	if _, err := follow(context.Background(), c, out, newProgress(io.Discard, false), func(_ context.Context, d time.Duration) {
		slept = append(slept, d)
	}); err != nil {
		t.Fatal(err)
	}
	at := []time.Duration{0, 0} // the send, then the first poll
	for _, d := range slept {
		at = append(at, at[len(at)-1]+d)
	}
	for i := range at {
		n := 0
		for _, a := range at[i:] {
			if a-at[i] < time.Minute {
				n++
			}
		}
		if n > 10 {
			t.Fatalf("%d requests in the minute from %v (pauses %v)", n, at[i], slept)
		}
	}
}

// send --json --wait prints one JSON document, with null for the dates
// the API answers null; an error after the send is not prefixed twice.
func TestSendJSONWait(t *testing.T) {
	srv, _ := fakeNode(t, "SENT", "DELIVERED")
	out, err := runCmd(t, "send", "--url", srv.URL, "--key", "svc_test_x", "--to", "5511999990000", "--message", "hi", "--wait", "--json")
	if err != nil {
		t.Fatalf("send --json --wait: %v\n%s", err, out)
	}
	var doc struct {
		Sent     map[string]any   `json:"sent"`
		Messages []map[string]any `json:"messages"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	if err := dec.Decode(&doc); err != nil || dec.More() {
		t.Fatalf("not one JSON document (%v):\n%s", err, out)
	}
	if len(doc.Messages) != 1 || doc.Messages[0]["status"] != "DELIVERED" || doc.Sent["campaignId"] != "cmp_1" {
		t.Fatalf("the document: %s", out)
	}
	if v, ok := doc.Messages[0]["scheduledAt"]; !ok || v != nil || strings.Contains(out, "0001-01-01") {
		t.Errorf("an empty date is not null: %s", out)
	}
	srv, _ = fakeNode(t, 404)
	_, err = runCmd(t, "send", "--url", srv.URL, "--key", "svc_test_x", "--to", "5511999990000", "--message", "hi", "--wait")
	if err == nil || strings.HasPrefix(err.Error(), "msgsvc: ") || !strings.Contains(err.Error(), "NOT_FOUND") {
		t.Errorf("an error while following: %v", err)
	}
}
