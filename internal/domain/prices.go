package domain

// micro is one credit in micro-credits, the unit of every amount.
const micro = 1_000_000

// Rates are per-destination prices in micro-credits.
type Rates struct {
	SMSSegment     int64 `json:"smsSegment"`     // per SMS segment
	RCSMessage     int64 `json:"rcsMessage"`     // per RCS message
	WAConversation int64 `json:"waConversation"` // per new template-initiated WhatsApp conversation (24 h)
	WAInWindow     int64 `json:"waInWindow"`     // per WhatsApp message inside an open conversation window
}

// Prices is an account's price table: the home-country and abroad defaults,
// and overrides per destination calling code.
type Prices struct {
	Home      Rates            `json:"home"`
	Abroad    Rates            `json:"abroad"`
	Countries map[string]Rates `json:"countries,omitempty"`
}

// DefaultPrices is the table of an account without its own: SMS 1 per segment at home and 2 abroad,
// RCS 1 per message, WhatsApp 2 per new template conversation and 0 inside
// an open window.
func DefaultPrices() Prices {
	return Prices{
		Home:   Rates{SMSSegment: 1 * micro, RCSMessage: 1 * micro, WAConversation: 2 * micro},
		Abroad: Rates{SMSSegment: 2 * micro, RCSMessage: 1 * micro, WAConversation: 2 * micro},
	}
}

// ParsePrices reads a stored price table (a PriceSheet) over the defaults,
// for an account on no plan whose home calling code is not known: a
// country the table names starts from the abroad rates. Accounts resolve
// theirs with ResolvePrices (Account.PriceList).
func ParsePrices(raw string) (Prices, error) {
	return ResolvePrices("", raw, "")
}

func (p Prices) rates(dest, home string) Rates {
	if r, ok := p.Countries[dest]; ok {
		return r
	}
	if dest == home {
		return p.Home
	}
	return p.Abroad
}

// SMS prices a text of the given segments to a destination calling code.
func (p Prices) SMS(dest, home string, segments int) int64 {
	return p.rates(dest, home).SMSSegment * int64(segments)
}

// RCS prices one RCS message.
func (p Prices) RCS(dest, home string) int64 { return p.rates(dest, home).RCSMessage }

// WhatsApp prices one WhatsApp message: a new template-initiated
// conversation, or a message inside an open window.
func (p Prices) WhatsApp(dest, home string, newConversation bool) int64 {
	if newConversation {
		return p.rates(dest, home).WAConversation
	}
	return p.rates(dest, home).WAInWindow
}
