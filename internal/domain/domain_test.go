package domain

import (
	"reflect"
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
