package bench

import (
	"net/http"
	"strings"
	"testing"
)

func TestTwilioFrontRequestAndCallback(t *testing.T) {
	o := Options{N: 1, C: 1, Front: FrontTwilio, Twilio: TwilioLogin{AccountSid: "AC1", AuthToken: "t", From: "+15550001111"}}.withDefaults()
	if err := o.checkFront(); err != nil {
		t.Fatal(err)
	}
	f := o.twilioForm(0, "http://127.0.0.1:9/hooks")
	if f.Get("To") != "+"+number(0) || f.Get("From") != "+15550001111" || f.Get("Body") != o.Text || f.Get("StatusCallback") != "http://127.0.0.1:9/hooks" {
		t.Fatalf("form %v", f)
	}
	if f := o.twilioForm(1, ""); f.Has("StatusCallback") {
		t.Fatalf("a run without callbacks asks for one: %v", f)
	}
	for _, bad := range []Options{
		{Front: FrontTwilio, BatchSize: 2, Type: "SMS", Twilio: o.Twilio},
		{Front: FrontTwilio, BatchSize: 1, Type: "WHATSAPP", Twilio: o.Twilio},
		{Front: FrontTwilio, BatchSize: 1, Type: "SMS"},
		{Front: "soap", BatchSize: 1, Type: "SMS"},
	} {
		if err := bad.checkFront(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}

	body := []byte("MessageSid=SMab&MessageStatus=delivered&AccountSid=AC1")
	p, id := twilioCallback(body, http.Header{"I-Twilio-Idempotency-Token": {"evt_1"}})
	if p.MessageID != "SMab" || p.Status != "delivered" || id != "evt_1" || !finalStatuses("SMS", FrontTwilio)[p.Status] {
		t.Fatalf("callback read as %+v %q", p, id)
	}
	if _, id := twilioCallback(body, http.Header{}); !strings.HasPrefix(id, "SMab/") {
		t.Fatalf("identity without a token: %q", id)
	}
	if finalStatuses("SMS", FrontTwilio)["sent"] {
		t.Fatal("sent is not final")
	}
}
