package telnyx_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/httpcall"
	"github.com/msgsvc/msgsvc/internal/provider/httpcall/httpcalltest"
	"github.com/msgsvc/msgsvc/internal/provider/telnyx"
)

// Every kind of message msgsvc sends passes the request validation of
// Telnyx's own OpenAPI document, served by Prism without --errors (the
// document's own example answer breaks its schema; see
// ../shared/peers/telnyx/README.md): a 200 with an id, and no violation
// in our request in Prism's sl-violations header. Prism serves the paths
// without the /v2 base, so the test drops it on the way. No webhook_url
// is sent: Prism would call it.
func TestPeerEveryKindPassesValidation(t *testing.T) {
	base := httpcalltest.Peer(t, "MSGSVC_TEST_TELNYX_API_URL", telnyxPrism)
	httpcalltest.CheckPeer(t, telnyx.Config{APIKey: "KEYexample", PublicKey: publicKey(),
		Account: httpcall.Account{From: "+18445550001", APIURL: base, Tuning: httpcalltest.Once}}, []httpcalltest.PeerCase[telnyx.Config]{
		{Name: "SMS from a number", Msg: provider.Outbound{ID: "msg_1", To: "18445550002", Body: "Your code is 482913"}},
		{Name: "SMS with a sender of its own", Msg: provider.Outbound{ID: "msg_2", To: "+447700900123", From: "+18445550003", Body: "Olá 👍"}},
		{Name: "SMS through a messaging profile", Tune: func(c *telnyx.Config) {
			c.From, c.MessagingProfileID = "", "abc85f64-5717-4562-b3fc-2c9600000000"
		}, Msg: provider.Outbound{ID: "msg_3", To: "18445550002", Body: "From the pool"}},
		{Name: "alphanumeric sender with a profile", Tune: func(c *telnyx.Config) {
			c.MessagingProfileID = "abc85f64-5717-4562-b3fc-2c9600000000"
		}, Msg: provider.Outbound{ID: "msg_4", To: "447700900123", From: "AcmeInc", Body: "Hello"}},
		{Name: "MMS", Msg: provider.Outbound{ID: "msg_5", To: "18445550002", Body: "Our shop",
			Content: domain.Content{Media: &domain.Media{URL: "https://cdn.acme.example/shop.jpg"}}}},
	}, func() *httpcalltest.Recorder { return &httpcalltest.Recorder{Strip: "/v2"} },
		telnyx.New, func(ref string) bool { return ref != "" })
}

// The check above can fail: a request the document refuses is seen as
// ours.
func TestPeerSeesOurViolations(t *testing.T) {
	base := httpcalltest.Peer(t, "MSGSVC_TEST_TELNYX_API_URL", telnyxPrism)
	rec := &httpcalltest.Recorder{Strip: "/v2"}
	req, _ := http.NewRequest(http.MethodPost, base+"/v2/messages", strings.NewReader(`{"text":"no recipient"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer KEYexample")
	rec.Refuses(t, req, 422, "a send without to")
	a := rec.Answers()[0]
	ours := false
	for _, v := range a.Violations {
		ours = ours || v.InRequest()
	}
	if !ours {
		t.Fatalf("a send without to: %d %+v", a.Status, a.Violations)
	}
}

const telnyxPrism = "Prism serving Telnyx's document without --errors (e.g. http://127.0.0.1:16120)"
