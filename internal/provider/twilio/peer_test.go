package twilio_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/httpcall"
	"github.com/msgsvc/msgsvc/internal/provider/httpcall/httpcalltest"
	"github.com/msgsvc/msgsvc/internal/provider/twilio"
)

// Every kind of message msgsvc sends passes the request validation of
// Twilio's own OpenAPI document, served by Prism with --errors (CI starts
// it: see .ci/run and ../shared/peers/twilio/README.md): no 422, a 201
// with a message SID.
func TestPeerEveryKindPassesValidation(t *testing.T) {
	base := httpcalltest.Peer(t, "MSGSVC_TEST_TWILIO_API_URL", twilioPrism)
	httpcalltest.CheckPeer(t, twilio.Config{AccountSID: testSID, AuthToken: testToken,
		Account: httpcall.Account{From: "+15017122661", APIURL: base, PublicURL: testPublic, Tuning: httpcalltest.Once}}, []httpcalltest.PeerCase[twilio.Config]{
		{Name: "SMS from a number", Msg: provider.Outbound{ID: "msg_1", To: "447700900123", Body: "Your code is 482913"}},
		{Name: "SMS with a sender of its own", Msg: provider.Outbound{ID: "msg_2", To: "+447700900123", From: "+15017122662", Body: "Olá, tudo bem? 👍"}},
		{Name: "SMS through a Messaging Service", Tune: func(c *twilio.Config) {
			c.From, c.MessagingServiceSID = "", "MG0123456789abcdef0123456789abcdef"
		}, Msg: provider.Outbound{ID: "msg_3", To: "447700900123", Body: "From the pool"}},
		{Name: "MMS", Msg: provider.Outbound{ID: "msg_4", To: "15558675310", Body: "Our shop",
			Content: domain.Content{Media: &domain.Media{URL: "https://cdn.acme.example/shop.jpg"}}}},
		{Name: "MMS without text", Msg: provider.Outbound{ID: "msg_5", To: "15558675310",
			Content: domain.Content{Media: &domain.Media{URL: "https://cdn.acme.example/shop.jpg"}}}},
	}, func() *httpcalltest.Recorder {
		// Twilio's documentation and libraries send each media address as
		// MediaUrl=…, repeated; the document types it as an array, and
		// Prism reads a form array only when its key ends in []. The key
		// is re-spelled for Prism alone, so that the rest of the request
		// is still checked.
		return &httpcalltest.Recorder{Respell: func(b []byte) []byte {
			return bytes.ReplaceAll(b, []byte("MediaUrl="), []byte("MediaUrl%5B%5D="))
		}}
	}, twilio.New, func(ref string) bool { return strings.HasPrefix(ref, "SM") })
}

// The check above can fail: a request the document refuses is seen as
// ours (a send without To).
func TestPeerSeesOurViolations(t *testing.T) {
	base := httpcalltest.Peer(t, "MSGSVC_TEST_TWILIO_API_URL", twilioPrism)
	req, _ := http.NewRequest(http.MethodPost, base+"/2010-04-01/Accounts/"+testSID+"/Messages.json", strings.NewReader("From=%2B15017122661&Body=hi"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(testSID, testToken)
	(&httpcalltest.Recorder{}).Refuses(t, req, 422, "a send without To")
}

const twilioPrism = "Prism serving Twilio's document with --errors (e.g. http://127.0.0.1:16110)"
