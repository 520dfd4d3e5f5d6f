package domain

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestPathOnlyMovesForward(t *testing.T) {
	cases := []struct {
		from, to Status
		want     []Status
	}{
		{Sending, Sent, []Status{Sent}},
		{Sending, Delivered, []Status{Sent, Delivered}},
		{Sending, Read, []Status{Sent, Delivered, Read}},
		{Sent, Delivered, []Status{Delivered}},
		{Delivered, Sent, nil},
		{Delivered, Failed, nil},
		{Sent, Failed, []Status{Failed}},
		{Sending, Canceled, []Status{Canceled}},
		{Sent, Canceled, nil},
		{Failed, Delivered, nil},
		{Canceled, Sent, nil},
		{Read, Read, nil},
	}
	for _, c := range cases {
		if got := c.from.Path(c.to); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s → %s: got %v, want %v", c.from, c.to, got, c.want)
		}
	}
}

func TestParseChannelIsCaseInsensitive(t *testing.T) {
	for in, want := range map[string]Channel{"sms": SMS, " WhatsApp ": WhatsApp, "RCS": RCS} {
		got, err := ParseChannel(in)
		if err != nil || got != want {
			t.Errorf("ParseChannel(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseChannel("fax"); err == nil {
		t.Error("ParseChannel(fax) accepted")
	}
}

// Rows written before Content was typed hold the request's own JSON shapes;
// they must read back the same.
func TestContentReadsStoredForm(t *testing.T) {
	stored := `{"buttons":[{"type":"reply","title":"Yes","payload":"y"}],"media":{"mediaId":"med_1"},` +
		`"fallback":{"type":"SMS","message":"hi","segments":1,"encoding":"GSM-7","smsCredits":2000000,"rcsCredits":1000000}}`
	c, err := DecodeContent(stored)
	if err != nil {
		t.Fatal(err)
	}
	fb, ok := c.SMSFallback()
	if !ok || fb.SMSCredits != 2_000_000 || fb.Message != "hi" || c.Media.MediaID != "med_1" || c.Buttons[0].Payload != "y" {
		t.Fatalf("decoded %+v", c)
	}
	again, err := DecodeContent(c.Encode())
	if err != nil || !reflect.DeepEqual(again, c) {
		t.Fatalf("round trip: %+v, %v", again, err)
	}
	if (Content{}).Encode() != "" {
		t.Error("plain text must store as empty content")
	}
	// A plain SMS from the Twilio front keeps its origin: where its
	// status callbacks go.
	tw := Content{Twilio: &TwilioOrigin{AccountSid: "AC1", StatusCallback: "https://x.example.com/cb"}}
	if back, err := DecodeContent(tw.Encode()); err != nil || back.Twilio == nil || *back.Twilio != *tw.Twilio {
		t.Errorf("Twilio origin round trip: %+v, %v", back, err)
	}
}

func TestHistoryOrdersTiesByProgress(t *testing.T) {
	at := time.UnixMilli(1_000).UTC()
	m := Message{CreatedAt: at, DeliveredAt: at.Add(time.Millisecond), SentAt: at.Add(time.Millisecond)}
	got := m.History()
	want := []Status{Sending, Sent, Delivered}
	for i, h := range got {
		if h.Status != want[i] {
			t.Fatalf("history %v, want %v", got, want)
		}
	}
}

// Values a person cannot tell apart (or a carrier delivers as one) are one
// sender: their keys are equal, so the second account's approval is
// SENDER_TAKEN; and a new request in such a form is refused outright.
func TestSenderTwins(t *testing.T) {
	for _, twin := range []string{"BetaShop ", " BetaShop", "betashop", "BETASHOP", " Beta  Shop "} {
		base := "BetaShop"
		if strings.Contains(twin, "a  S") {
			base = "Beta Shop"
		}
		if SenderKey(twin) != SenderKey(base) {
			t.Errorf("SenderKey(%q) = %q, SenderKey(%q) = %q: twins", twin, SenderKey(twin), base, SenderKey(base))
		}
	}
	for _, twin := range []string{"0015550001111", "015550001111", "+15550001111", "15550001111"} {
		if SenderKey(twin) != "15550001111" {
			t.Errorf("SenderKey(%q) = %q, want 15550001111", twin, SenderKey(twin))
		}
	}
	if SenderKey("Beta Shop") == SenderKey("BetaShop") {
		t.Error("a space is part of a sender ID: Beta Shop and BetaShop are two")
	}
	for _, v := range []string{"BetaShop ", " BetaShop", "Beta  Shop", "0015550001111", "015550001111"} {
		if RequestedSenderProblem(SMS, v) == "" {
			t.Errorf("a request for %q is accepted", v)
		}
		if !strings.Contains(RequestedSenderProblem(SMS, v), strings.TrimSpace(v)) && v[0] != '0' {
			t.Errorf("the refusal of %q does not show it quoted: %s", v, RequestedSenderProblem(SMS, v))
		}
	}
	if RequestedSenderProblem(WhatsApp, "0015550001111") == "" {
		t.Error("a WhatsApp number with 00 is accepted")
	}
	for _, v := range []string{"BetaShop", "Beta Shop", "15550001111", "12345"} {
		if msg := RequestedSenderProblem(SMS, v); msg != "" {
			t.Errorf("a request for %q is refused: %s", v, msg)
		}
	}
}
