package domain

import (
	"errors"
	"fmt"
	"sort"
)

// Level is what one account above a message's sender pays for it: a
// reseller is charged its own price for each message of its subtree. It is
// fixed when the send is accepted, like the sender's own price, so that a
// later change of a reseller's prices never changes what an accepted
// message cost it, and a refund gives back what was taken.
type Level struct {
	AccountID string
	// Charged is what was debited from that account and not yet refunded.
	Charged int64
	// SMS and RCS are, for an RCS message with an SMS fallback, its price
	// at this level on either channel: the larger is reserved, and the
	// difference refunded once the channel is known (as for the sender).
	SMS int64
	RCS int64
}

// LevelPrice is what m costs an account with price table p and home
// calling code home: the same message priced as that account would pay for
// sending it itself. newConversation tells whether a WhatsApp message
// opens a charged conversation.
func LevelPrice(p Prices, home string, m Message, newConversation bool) Level {
	dest := m.CountryCode
	switch m.Type {
	case SMS:
		return Level{Charged: p.SMS(dest, home, m.Segments)}
	case WhatsApp:
		return Level{Charged: p.WhatsApp(dest, home, newConversation)}
	}
	rcs := p.RCS(dest, home)
	fb, ok := m.Content.SMSFallback()
	if !ok {
		return Level{Charged: rcs}
	}
	sms := p.SMS(dest, home, fb.Segments)
	return Level{Charged: max(rcs, sms), SMS: sms, RCS: rcs}
}

// ErrPriceBelowParent: a reseller set a child's price below what the
// reseller itself pays, without saying allowLoss.
var ErrPriceBelowParent = errors.New("price below the reseller's own")

// PriceShortfall is one rate of a child's table below its parent's.
type PriceShortfall struct {
	Destination string // a calling code, or "abroad" for every destination without a rate of its own
	Rate        string // smsSegment, rcsMessage, waConversation or waInWindow
	Child       int64  // micro-credits
	Parent      int64
}

func (s PriceShortfall) String() string {
	return fmt.Sprintf("%s to %s: %d below %d micro-credits", s.Rate, s.Destination, s.Child, s.Parent)
}

// PriceShortfalls lists every rate at which a child (table child, home
// calling code childHome) would pay less than its parent pays for the same
// message, destination by destination: each calling code either table or
// either home names, and "abroad" for every other. None means the parent
// cannot lose money on a message of the child.
func PriceShortfalls(child Prices, childHome string, parent Prices, parentHome string) []PriceShortfall {
	dests := map[string]bool{childHome: true, parentHome: true}
	for cc := range child.Countries {
		dests[cc] = true
	}
	for cc := range parent.Countries {
		dests[cc] = true
	}
	keys := make([]string, 0, len(dests)+1)
	for cc := range dests {
		if cc != "" {
			keys = append(keys, cc)
		}
	}
	sort.Strings(keys)
	var out []PriceShortfall
	check := func(dest string, c, p Rates) {
		for _, r := range []struct {
			name string
			c, p int64
		}{{"smsSegment", c.SMSSegment, p.SMSSegment}, {"rcsMessage", c.RCSMessage, p.RCSMessage},
			{"waConversation", c.WAConversation, p.WAConversation}, {"waInWindow", c.WAInWindow, p.WAInWindow}} {
			if r.c < r.p {
				out = append(out, PriceShortfall{Destination: dest, Rate: r.name, Child: r.c, Parent: r.p})
			}
		}
	}
	for _, cc := range keys {
		check(cc, child.rates(cc, childHome), parent.rates(cc, parentHome))
	}
	// A destination neither table names nor either home: both pay abroad.
	check("abroad", child.Abroad, parent.Abroad)
	return out
}

// CheckChildPrices is the margin guard of a reseller pricing a child: the
// child's table may not undercut the parent's own at any destination
// unless the parent says allowLoss. The error wraps ErrPriceBelowParent
// and names the first rates below.
func CheckChildPrices(child Prices, childHome string, parent Prices, parentHome string, allowLoss bool) error {
	if allowLoss {
		return nil
	}
	short := PriceShortfalls(child, childHome, parent, parentHome)
	if len(short) == 0 {
		return nil
	}
	msg := short[0].String()
	if len(short) > 1 {
		msg = fmt.Sprintf("%s (and %d more)", msg, len(short)-1)
	}
	return fmt.Errorf("%w: %s; set allowLoss to price it below", ErrPriceBelowParent, msg)
}
