package domain

import (
	"errors"
	"strings"
	"testing"
)

func mustPrices(t *testing.T, raw string) Prices {
	t.Helper()
	p, err := ParsePrices(raw)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCheckChildPrices(t *testing.T) {
	parent := mustPrices(t, `{"home":{"smsSegment":1000000},"countries":{"44":{"smsSegment":3000000,"rcsMessage":1000000,"waConversation":2000000}}}`)
	cases := []struct {
		name      string
		child     string
		childHome string
		allowLoss bool
		wantShort []string // "rate to destination"
	}{
		{"the same table", `{"home":{"smsSegment":1000000},"countries":{"44":{"smsSegment":3000000,"rcsMessage":1000000,"waConversation":2000000}}}`, "34", false, nil},
		{"dearer everywhere", `{"home":{"smsSegment":1500000,"rcsMessage":1500000,"waConversation":2500000},"abroad":{"smsSegment":2500000,"rcsMessage":1500000,"waConversation":2500000},"countries":{"44":{"smsSegment":3500000,"rcsMessage":1500000,"waConversation":2500000}}}`, "34", false, nil},
		{"below at one country the parent names", `{"countries":{"44":{"smsSegment":2000000,"rcsMessage":1000000,"waConversation":2000000}}}`, "34", false,
			[]string{"smsSegment to 44"}},
		// The child's defaults send to 44 at the abroad rate (2), below
		// the parent's 3 there.
		{"below through the child's defaults", ``, "34", false, []string{"smsSegment to 44"}},
		{"below abroad", `{"abroad":{"smsSegment":1000000,"rcsMessage":1000000,"waConversation":2000000},"countries":{"44":{"smsSegment":3000000,"rcsMessage":1000000,"waConversation":2000000}}}`, "34", false,
			[]string{"smsSegment to abroad"}},
		// A child at home in 55 pays its home rate (1) there; the parent,
		// at home in 34, pays abroad (2) to 55.
		{"a child at home elsewhere", `{"countries":{"44":{"smsSegment":3000000,"rcsMessage":1000000,"waConversation":2000000}}}`, "55", false,
			[]string{"smsSegment to 55"}},
		{"below with allowLoss", `{"home":{"smsSegment":1}}`, "34", true, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			child := mustPrices(t, c.child)
			err := CheckChildPrices(child, c.childHome, parent, "34", c.allowLoss)
			if len(c.wantShort) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrPriceBelowParent) {
				t.Fatalf("error %v, want ErrPriceBelowParent", err)
			}
			var got []string
			for _, s := range PriceShortfalls(child, c.childHome, parent, "34") {
				got = append(got, s.Rate+" to "+s.Destination)
			}
			if strings.Join(got, "; ") != strings.Join(c.wantShort, "; ") {
				t.Fatalf("shortfalls %v, want %v", got, c.wantShort)
			}
			if !strings.Contains(err.Error(), c.wantShort[0]) {
				t.Fatalf("error %q does not name %q", err, c.wantShort[0])
			}
		})
	}
}

func TestLevelPrice(t *testing.T) {
	p := mustPrices(t, `{"home":{"smsSegment":1000000,"rcsMessage":500000,"waConversation":3000000,"waInWindow":100000}}`)
	sms := Message{Type: SMS, CountryCode: "34", Segments: 3}
	if got := LevelPrice(p, "34", sms, false); got != (Level{Charged: 3000000}) {
		t.Errorf("SMS of 3 segments at home: %+v", got)
	}
	if got := LevelPrice(p, "55", sms, false); got != (Level{Charged: 6000000}) {
		t.Errorf("the same from an account at home elsewhere (abroad, default 2): %+v", got)
	}
	wa := Message{Type: WhatsApp, CountryCode: "34"}
	if LevelPrice(p, "34", wa, true).Charged != 3000000 || LevelPrice(p, "34", wa, false).Charged != 100000 {
		t.Error("WhatsApp: a new conversation, then inside the window")
	}
	rcs := Message{Type: RCS, CountryCode: "34", Content: Content{Fallback: &Fallback{Channel: SMS, Segments: 2}}}
	if got := LevelPrice(p, "34", rcs, false); got != (Level{Charged: 2000000, SMS: 2000000, RCS: 500000}) {
		t.Errorf("RCS with a fallback of 2 segments: %+v", got)
	}
}
