package vonage_test

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/httpcall"
	"github.com/msgsvc/msgsvc/internal/provider/httpcall/httpcalltest"
	"github.com/msgsvc/msgsvc/internal/provider/providertest"
	"github.com/msgsvc/msgsvc/internal/provider/vonage"
)

const vonageSkip = "set MSGSVC_TEST_VONAGE_API_URL to Prism serving Vonage's SMS API document without --errors (e.g. http://127.0.0.1:16130)"

// Every kind of message msgsvc sends passes the request validation of
// Vonage's own OpenAPI document, served by Prism without --errors (the
// document's 200 is an ambiguous oneOf; see
// ../shared/peers/vonage/README.md): a 200 with a message-id, and no
// violation in our request in Prism's sl-violations header. Prism serves
// the paths without the /sms base, so the test drops it on the way.
func TestPeerEveryKindPassesValidation(t *testing.T) {
	base := os.Getenv("MSGSVC_TEST_VONAGE_API_URL")
	if base == "" {
		t.Skip(vonageSkip)
	}
	for _, c := range []struct {
		name string
		msg  provider.Outbound
	}{
		{"GSM text from the configured sender", provider.Outbound{ID: "msg_1", To: "447700900000", Body: "Your code is 482913"}},
		{"Unicode text", provider.Outbound{ID: "msg_2", To: "+5511999990001", Body: "Olá, tudo bem? 👍"}},
		{"a numeric sender of its own", provider.Outbound{ID: "msg_3", To: "447700900000", From: "+447700900001", Body: "Hi"}},
		{"a long text", provider.Outbound{ID: "msg_01JD8Z9D5F7H9J1L3N5P7R9T1V", To: "447700900000", Body: strings.Repeat("long text ", 40)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := &httpcalltest.Recorder{Strip: "/sms"}
			a, err := vonage.New(vonage.Config{APIKey: testKey, APISecret: testSecret, SignatureSecret: testSigSec, From: "AcmeInc",
				APIURL: base, Tuning: httpcall.Tuning{MaxAttempts: 1}}, provider.Deps{Sink: &providertest.Sink{}, Version: "0.5.0-dev"},
				httpcall.Deps{HTTP: &http.Client{Transport: rec}, Log: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			c.msg.Channel, c.msg.Env = domain.SMS, domain.Live
			res := a.Submit(context.Background(), []provider.Outbound{c.msg})
			if res[0].Err != nil || res[0].Ref == "" {
				t.Errorf("%+v %v", res[0], res[0].Err)
			}
			rec.CheckOurs(t)
		})
	}
}

// The check above can fail: a request the document refuses is seen as
// ours.
func TestPeerSeesOurViolations(t *testing.T) {
	base := os.Getenv("MSGSVC_TEST_VONAGE_API_URL")
	if base == "" {
		t.Skip(vonageSkip)
	}
	rec := &httpcalltest.Recorder{Strip: "/sms"}
	req, _ := http.NewRequest(http.MethodPost, base+"/sms/json", strings.NewReader("api_key=short&from=AcmeInc&to=447700900000&text=hi"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := (&http.Client{Transport: rec}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if a := rec.Answers()[0]; a.Status != 422 {
		t.Fatalf("an api_key of 5 characters: %d %s", a.Status, a.Body)
	}
}
