package webhook

import (
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// jsonStatusBody is StatusBody through encoding/json alone, the form every
// stored body has had.
func jsonStatusBody(m domain.Message, status domain.Status, at time.Time) string {
	p := statusPayload{Event: DeliveryStatus, CampaignID: m.CampaignID, MessageID: m.ID, Phone: m.To, Status: status,
		Timestamp: domain.FormatTime(at), Provider: m.Provider}
	if status == domain.Failed {
		p.ErrorCode, p.ErrorMessage = orNull(m.ErrorCode), orNull(m.ErrorMessage)
	}
	return encode(p)
}

func TestStatusBodyIsEncodingJSONs(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 123e6, time.UTC)
	base := domain.Message{ID: "msg_01hx", CampaignID: "cmp_01hx", To: "46720000001", Provider: "smpp"}
	texts := []string{"", "plain", "a\"quote", `back\slash`, "<b>&amp;</b>", "tab\there", "new\nline", "\x00\x1f\x7f",
		"naïve", "\u2028\u2029", "\xff\xfe invalid", "emoji 😀", "ESME_RINVDSTADR (0x0b)"}
	n := 0
	for _, st := range []domain.Status{domain.Sent, domain.Delivered, domain.Read, domain.Failed, domain.Canceled} {
		for _, text := range texts {
			for field := range 5 {
				m := base
				m.ErrorCode, m.ErrorMessage = "UNDELIVERABLE", "the carrier said no"
				switch field {
				case 0:
					m.ErrorCode = text
				case 1:
					m.ErrorMessage = text
				case 2:
					m.Provider = text
				case 3:
					m.To = text
				case 4:
					m.CampaignID, m.ID = text, text
				}
				got, want := StatusBody(m, st, at), jsonStatusBody(m, st, at)
				if got != want {
					t.Fatalf("%s with %q in field %d:\n got %s\nwant %s", st, text, field, got, want)
				}
				n++
			}
		}
	}
	// The fast path must have been taken for the plain cases, or the test
	// compares encoding/json with itself.
	m := base
	if _, ok := statusBodyFast(&statusPayload{Event: DeliveryStatus, CampaignID: m.CampaignID, MessageID: m.ID,
		Phone: m.To, Status: domain.Sent, Timestamp: domain.FormatTime(at), Provider: m.Provider}); !ok {
		t.Fatal("a plain body declined by the fast path")
	}
	if _, ok := statusBodyFast(&statusPayload{Event: DeliveryStatus, Provider: "<x>"}); ok {
		t.Fatal("a body that needs escaping taken by the fast path")
	}
	t.Logf("%d bodies compared", n)
}

func FuzzStatusBody(f *testing.F) {
	f.Add("cmp_1", "msg_1", "46720000001", "smpp", "UNDELIVERABLE", "no route", true)
	f.Add("", "", "", "", "", "", false)
	f.Add("<", "&", ">", "\"", "\\", "\u2028", true)
	f.Fuzz(func(t *testing.T, campaign, msg, to, provider, code, text string, failed bool) {
		m := domain.Message{ID: msg, CampaignID: campaign, To: to, Provider: provider, ErrorCode: code, ErrorMessage: text}
		st := domain.Delivered
		if failed {
			st = domain.Failed
		}
		at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		if got, want := StatusBody(m, st, at), jsonStatusBody(m, st, at); got != want {
			t.Fatalf("got %s\nwant %s", got, want)
		}
	})
}
