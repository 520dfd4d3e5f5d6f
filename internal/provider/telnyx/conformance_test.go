package telnyx_test

import (
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/httpcall"
	"github.com/msgsvc/msgsvc/internal/provider/httpcall/httpcalltest"
	"github.com/msgsvc/msgsvc/internal/provider/telnyx"
	"github.com/msgsvc/msgsvc/internal/provider/telnyx/telnyxtest"
)

const (
	busyTo = "+447700900998" // the peer answers 503
	badTo  = "+447700900999" // 40310: invalid to address
)

// testKey is the account's webhook key pair of these tests.
var testKey = ed25519.NewKeyFromSeed([]byte("telnyx-webhook-seed-for-tests-32"))

func publicKey() string {
	return base64.StdEncoding.EncodeToString(testKey.Public().(ed25519.PublicKey))
}

func TestConformance(t *testing.T) {
	httpcalltest.Conformance(t, telnyx.Type(), httpcalltest.Stand[map[string]any]{Start: telnyxtest.New,
		Key: func(b map[string]any) string { s, _ := b["to"].(string); return s }, Busy: busyTo, Bad: badTo,
		Answers: map[string]httpcalltest.Canned{
			busyTo: {Status: 503, Body: telnyxtest.Error("10007", "Unexpected error")},
			badTo:  {Status: 400, Body: telnyxtest.Error("40310", "Invalid 'to' address")},
		}}, func(url string) provider.Settings {
		return telnyx.Config{APIKey: "KEYtest", PublicKey: publicKey(),
			Account: httpcall.Account{From: "+18445550001", APIURL: url, Tuning: httpcalltest.Fast}}
	}, func(t *testing.T, a provider.Adapter, m provider.Outbound, r provider.Result) {
		if w := deliver(a, finalized(r.Ref, m.To, "delivered", ""), time.Now()); w.Code != 200 {
			t.Fatalf("webhook answered %d: %s", w.Code, w.Body)
		}
	})
}

// finalized is a message.finalized event for the message id with one
// recipient's status (and an error code when set).
func finalized(id, to, status, errorCode string) string {
	errs := "[]"
	if errorCode != "" {
		errs = fmt.Sprintf(`[{"code":%q,"title":"carrier said no","detail":"carrier said no"}]`, errorCode)
	}
	return fmt.Sprintf(`{"data":{"event_type":"message.finalized","id":"ev-1","occurred_at":"2026-11-25T10:00:00.000+00:00","record_type":"event",`+
		`"payload":{"id":%q,"direction":"outbound","to":[{"phone_number":"+%s","status":%q}],"errors":%s}},"meta":{"attempt":1}}`,
		id, strings.TrimPrefix(to, "+"), status, errs)
}

// deliver posts body to the adapter's webhook, signed at "at".
func deliver(a provider.Adapter, body string, at time.Time) *httptest.ResponseRecorder {
	ts := strconv.FormatInt(at.Unix(), 10)
	return httpcalltest.Serve(telnyx.Type(), a, post(body, ts, telnyx.Sign(testKey, ts, []byte(body))))
}

func post(body, ts, sig string) *http.Request {
	req := httptest.NewRequest(http.MethodPost, telnyx.WebhookPath, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if ts != "" {
		req.Header.Set("telnyx-timestamp", ts)
	}
	if sig != "" {
		req.Header.Set("telnyx-signature-ed25519", sig)
	}
	return req
}
