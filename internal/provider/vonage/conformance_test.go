package vonage_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/httpcall"
	"github.com/msgsvc/msgsvc/internal/provider/httpcall/httpcalltest"
	"github.com/msgsvc/msgsvc/internal/provider/vonage"
	"github.com/msgsvc/msgsvc/internal/provider/vonage/vonagetest"
)

const (
	testKey    = "abcd1234"
	testSecret = "abcdef0123456789"
	testSigSec = "signature-secret-for-tests"
	busyTo     = "447700900998" // status 1: throttled
	badTo      = "447700900999" // status 6: invalid message
)

func TestConformance(t *testing.T) {
	httpcalltest.Conformance(t, vonage.Type(), httpcalltest.Stand[url.Values]{Start: vonagetest.New,
		Key: func(f url.Values) string { return f.Get("to") }, Busy: busyTo, Bad: badTo, Answers: map[string]httpcalltest.Canned{
			busyTo: {Status: 200, Body: vonagetest.Refused(busyTo, "1", "Throughput Rate Exceeded")},
			badTo:  {Status: 200, Body: vonagetest.Refused(badTo, "6", "Unroutable message")},
		}}, func(url string) provider.Settings {
		return vonage.Config{APIKey: testKey, APISecret: testSecret, SignatureSecret: testSigSec,
			Account: httpcall.Account{From: "AcmeInc", APIURL: url, Tuning: httpcalltest.Fast}}
	}, func(t *testing.T, a provider.Adapter, m provider.Outbound, r provider.Result) {
		w := callback(a, vonage.StatusPath, receipt(r.Ref, m.To, "delivered", "0", time.Now()), "md5hash", "")
		if w.Code/100 != 2 {
			t.Fatalf("receipt answered %d: %s", w.Code, w.Body)
		}
	})
}

// receipt is a delivery receipt's parameters, unsigned.
func receipt(id, to, status, errCode string, at time.Time) map[string]string {
	return map[string]string{"msisdn": strings.TrimPrefix(to, "+"), "to": "AcmeInc", "network-code": "23410", "messageId": id,
		"price": "0.03330000", "status": status, "scts": "2611251000", "err-code": errCode, "api-key": testKey,
		"message-timestamp": at.UTC().Format("2006-01-02 15:04:05"), "timestamp": strconv.FormatInt(at.Unix(), 10),
		"nonce": "ec11dd3e-1e7f-4db5-9467-82b02cd223b9"}
}

// callback signs params with method (unless sig is given: "-" for none)
// and posts them as a form to the adapter's webhook at path.
func callback(a provider.Adapter, path string, params map[string]string, method, sig string) *httptest.ResponseRecorder {
	switch sig {
	case "":
		params["sig"] = vonage.Sign(params, testSigSec, method)
	case "-":
	default:
		params["sig"] = sig
	}
	f := url.Values{}
	for k, v := range params {
		f.Set(k, v)
	}
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(f.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return httpcalltest.Serve(vonage.Type(), a, req)
}
