package vonage_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/httpcall"
	"github.com/msgsvc/msgsvc/internal/provider/httpcall/httpcalltest"
	"github.com/msgsvc/msgsvc/internal/provider/vonage"
)

const vonagePrism = "Prism serving Vonage's SMS API document without --errors (e.g. http://127.0.0.1:16130)"

// Every kind of message msgsvc sends passes the request validation of
// Vonage's own OpenAPI document, served by Prism without --errors (the
// document's 200 is an ambiguous oneOf; see
// ../shared/peers/vonage/README.md): a 200 with a message-id, and no
// violation in our request in Prism's sl-violations header. Prism serves
// the paths without the /sms base, so the test drops it on the way.
func TestPeerEveryKindPassesValidation(t *testing.T) {
	base := httpcalltest.Peer(t, "MSGSVC_TEST_VONAGE_API_URL", vonagePrism)
	httpcalltest.CheckPeer(t, vonage.Config{APIKey: testKey, APISecret: testSecret, SignatureSecret: testSigSec,
		Account: httpcall.Account{From: "AcmeInc", APIURL: base, Tuning: httpcalltest.Once}}, []httpcalltest.PeerCase[vonage.Config]{
		{Name: "GSM text from the configured sender", Msg: provider.Outbound{ID: "msg_1", To: "447700900000", Body: "Your code is 482913"}},
		{Name: "Unicode text", Msg: provider.Outbound{ID: "msg_2", To: "+5511999990001", Body: "Olá, tudo bem? 👍"}},
		{Name: "a numeric sender of its own", Msg: provider.Outbound{ID: "msg_3", To: "447700900000", From: "+447700900001", Body: "Hi"}},
		{Name: "a long text", Msg: provider.Outbound{ID: "msg_01JD8Z9D5F7H9J1L3N5P7R9T1V", To: "447700900000",
			Body: strings.Repeat("long text ", 40)}},
	}, func() *httpcalltest.Recorder { return &httpcalltest.Recorder{Strip: "/sms"} },
		vonage.New, func(ref string) bool { return ref != "" })
}

// The check above can fail: a request the document refuses is seen as
// ours.
func TestPeerSeesOurViolations(t *testing.T) {
	base := httpcalltest.Peer(t, "MSGSVC_TEST_VONAGE_API_URL", vonagePrism)
	req, _ := http.NewRequest(http.MethodPost, base+"/sms/json", strings.NewReader("api_key=short&from=AcmeInc&to=447700900000&text=hi"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	(&httpcalltest.Recorder{Strip: "/sms"}).Refuses(t, req, 422, "an api_key of 5 characters")
}
