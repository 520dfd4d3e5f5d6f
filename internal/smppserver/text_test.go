package smppserver

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/nodetest"
	smpp "github.com/msgsvc/msgsvc/internal/pdu"
)

// The codings ESMEs send: 0 (GSM 03.38), 1 (IA5/ASCII, which node-smpp and
// others also use for GSM 03.38 septets), 3 (Latin-1) and 8 (UCS-2) are
// read as text; every other coding, binary included, is refused
// ESME_RINVDCS and logged with the user, the address and the reason.
func TestSubmitCodings(t *testing.T) {
	logs := &nodetest.Buffer{}
	f := start(t, func(c *Config) { c.Log = slog.New(slog.NewTextHandler(logs, nil)) })
	e := f.bound(t, smpp.BindTransceiver, "acme")
	texts := []struct {
		name string
		dc   byte
		msg  []byte
		want string
	}{
		{"GSM 03.38", 0, []byte{'a', 0x00, 0x02, 0x11, 0x1B, 0x3C, 0x1B, 0x65}, "a@$_[€"},
		{"IA5/ASCII", 1, []byte("a@b$c_d[e]{f}~g`h\\i^j|k\r\nl"), "a@b$c_d[e]{f}~g`h\\i^j|k\r\nl"},
		{"GSM 03.38 septets under data_coding 1", 1, []byte{'a', 0x00, 'b', 0x02, 0x11, 0x1B, 0x3C, ' ', 0x5B}, "a@b$_[ Ä"},
		{"'à' as a GSM septet under data_coding 1", 1, []byte{'v', 'o', 'i', 'l', 0x7F}, "voilà"},
		{"Latin-1", 3, []byte{'c', 0xE9, 0xFF}, "céÿ"},
		{"UCS-2", 8, []byte{0x04, 0x1F, 0xD8, 0x3D, 0xDE, 0x00}, "П😀"},
	}
	for _, c := range texts {
		if p := e.Call(smpp.SubmitSM, &smpp.SM{DestAddr: "5511999990000", DataCoding: c.dc, ShortMessage: c.msg}); p.Status != smpp.StatusOK {
			t.Fatalf("%s: %s", c.name, p.Status)
		}
		f.sender.mu.Lock()
		got := f.sender.drafts[len(f.sender.drafts)-1].Text
		f.sender.mu.Unlock()
		if got != c.want {
			t.Fatalf("%s: text %q, want %q", c.name, got, c.want)
		}
	}
	before := f.sender.count()
	for _, dc := range []byte{2, 4, 5, 6, 7, 9, 0x0A, 0x0E, 0x10, 0x18, 0xF0, 0xF4} {
		p := e.Call(smpp.SubmitSM, &smpp.SM{DestAddr: "5511999990000", DataCoding: dc, ShortMessage: []byte("hi")})
		if p.Status != smpp.StatusInvDCS || p.Body != nil {
			t.Fatalf("data_coding %#x: %s, want ESME_RINVDCS", dc, p.Status)
		}
	}
	if n := f.sender.count(); n != before {
		t.Fatalf("%d refused submits reached the send", n-before)
	}
	waitUntil(t, func() bool { return strings.Count(logs.String(), "smpp: refused") == 12 })
	line := strings.Split(logs.String(), "\n")[0]
	for _, want := range []string{"command=submit_sm", "systemId=acme", "userId=smu_a", "remoteAddr=127.0.0.1", "status=ESME_RINVDCS", "data_coding 0x02"} {
		if !strings.Contains(line, want) {
			t.Fatalf("log line %q lacks %q", line, want)
		}
	}
}

// A submit_sm's text is held to what an API send is: whole UCS-2, septets
// only under the 7-bit codings, a valid time, a concatenation IE that
// counts from 1 to its total. Refusals change nothing.
func TestSubmitTextChecks(t *testing.T) {
	f := start(t, nil)
	e := f.bound(t, smpp.BindTransceiver, "acme")
	udh := func(total, seq byte, text string) []byte { return append([]byte{5, 0, 3, 7, total, seq}, text...) }
	cases := []struct {
		name string
		sm   smpp.SM
		want smpp.Status
	}{
		{"a lone high surrogate", smpp.SM{DataCoding: 8, ShortMessage: []byte{0x00, 0x41, 0xD8, 0x3D}}, smpp.StatusSubmitFail},
		{"a lone low surrogate", smpp.SM{DataCoding: 8, ShortMessage: []byte{0xDE, 0x00, 0x00, 0x41}}, smpp.StatusSubmitFail},
		{"odd-length UCS-2", smpp.SM{DataCoding: 8, ShortMessage: []byte{0x00, 0x41, 0x00}}, smpp.StatusInvMsgLen},
		{"0x80 under data_coding 0", smpp.SM{DataCoding: 0, ShortMessage: []byte{'a', 0x80}}, smpp.StatusSubmitFail},
		{"0xFF under data_coding 0", smpp.SM{DataCoding: 0, ShortMessage: []byte{0xFF}}, smpp.StatusSubmitFail},
		{"0xE9 under data_coding 1", smpp.SM{DataCoding: 1, ShortMessage: []byte{'c', 0xE9}}, smpp.StatusSubmitFail},
		{"a schedule in month 13", smpp.SM{ShortMessage: []byte("hi"), ScheduleDeliveryTime: "301321100000000+"}, smpp.StatusInvSched},
		{"a schedule on 30 February", smpp.SM{ShortMessage: []byte("hi"), ScheduleDeliveryTime: "300230100000000+"}, smpp.StatusInvSched},
		{"a schedule at 24:00", smpp.SM{ShortMessage: []byte("hi"), ScheduleDeliveryTime: "301121240000000+"}, smpp.StatusInvSched},
		{"a schedule with a sign in a number", smpp.SM{ShortMessage: []byte("hi"), ScheduleDeliveryTime: "30+121100000000+"}, smpp.StatusInvSched},
		{"a relative schedule with letters", smpp.SM{ShortMessage: []byte("hi"), ScheduleDeliveryTime: "0000010000x0000R"}, smpp.StatusInvSched},
		{"a validity in month 13", smpp.SM{ShortMessage: []byte("hi"), ValidityPeriod: "301321100000000+"}, smpp.StatusInvExpiry},
		{"a validity offset past 48 quarters", smpp.SM{ShortMessage: []byte("hi"), ValidityPeriod: "301121100000049+"}, smpp.StatusInvExpiry},
		{"a concatenation IE of total 0, seq 5", smpp.SM{ESMClass: smpp.ESMClassUDHI, ShortMessage: udh(0, 5, "part")}, smpp.StatusSubmitFail},
		{"a concatenation IE of seq 0", smpp.SM{ESMClass: smpp.ESMClassUDHI, ShortMessage: udh(2, 0, "part")}, smpp.StatusSubmitFail},
		{"a concatenation IE of seq 3 of 2", smpp.SM{ESMClass: smpp.ESMClassUDHI, ShortMessage: udh(2, 3, "part")}, smpp.StatusSubmitFail},
		{"a 16-bit concatenation IE of total 0", smpp.SM{ESMClass: smpp.ESMClassUDHI,
			ShortMessage: append([]byte{6, 8, 4, 1, 2, 0, 1}, "part"...)}, smpp.StatusSubmitFail},
		{"a UDH longer than the message", smpp.SM{ESMClass: smpp.ESMClassUDHI, ShortMessage: []byte{9, 0, 3}}, smpp.StatusSubmitFail},
	}
	for _, c := range cases {
		sm := c.sm
		sm.DestAddr = "5511999990000"
		if p := e.Call(smpp.SubmitSM, &sm); p.Status != c.want || p.Body != nil {
			t.Fatalf("%s: %s, want %s", c.name, p.Status, c.want)
		}
	}
	if n := f.sender.count(); n != 0 {
		t.Fatalf("%d refused submits reached the send", n)
	}
	// What is valid still passes: the last part of two, a leap day, a
	// relative validity.
	ok := []smpp.SM{
		{ESMClass: smpp.ESMClassUDHI, ShortMessage: udh(2, 2, "part")},
		{ShortMessage: []byte("hi"), ScheduleDeliveryTime: "280229235959948-"},
		{ShortMessage: []byte("hi"), ValidityPeriod: "000002120000000R"},
	}
	for i, sm := range ok {
		sm.DestAddr = "5511999990000"
		if p := e.Call(smpp.SubmitSM, &sm); p.Status != smpp.StatusOK {
			t.Fatalf("valid submit %d: %s", i, p.Status)
		}
	}
}

// The core refuses a part with a user data header that does not fit one
// segment on the field "udh": the ESME hears ESME_RINVMSGLEN.
func TestSubmitOversizeUDHPart(t *testing.T) {
	f := start(t, nil)
	e := f.bound(t, smpp.BindTransceiver, "acme")
	f.sender.err = &domain.ValidationError{Fields: []domain.FieldError{{Path: "udh", Code: domain.FieldRange, Message: "does not fit one segment"}}}
	payload := append([]byte{5, 0, 3, 7, 2, 1}, strings.Repeat("a", 1524)...)
	p := e.Call(smpp.SubmitSM, &smpp.SM{DestAddr: "5511999990000", ESMClass: smpp.ESMClassUDHI,
		TLVs: smpp.TLVs{{Tag: smpp.TagMessagePayload, Value: payload}}})
	if p.Status != smpp.StatusInvMsgLen {
		t.Fatalf("an oversize UDH part: %s, want ESME_RINVMSGLEN", p.Status)
	}
}
