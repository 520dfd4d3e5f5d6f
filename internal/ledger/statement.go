package ledger

import "time"

// Statement is an account's money over one period, as its ledger tells it:
// what it held at the start, what came in and went out by kind, and what
// it held at the end. Amounts are micro-credits; Charges and Refunds are
// positive.
type Statement struct {
	AccountID string
	From, To  time.Time // [From, To)
	Opening   int64
	// TopUps are the operators' top-ups and corrections (a correction may
	// be negative).
	TopUps int64
	// Transfers are the credits a parent moved to (or took back from) the
	// account and those the account moved to its children, net.
	Transfers int64
	Charges   []ChargeLine
	Refunds   int64
	Closing   int64
}

// ChargeLine is what one channel to one calling code cost over the period:
// the debit lines of the messages charged, however many accounts each one
// was charged to above this one.
type ChargeLine struct {
	Channel  string
	Country  string
	Messages int64
	Segments int64
	Amount   int64
}

// Charged is the sum of the charge lines.
func (s Statement) Charged() int64 {
	var sum int64
	for _, c := range s.Charges {
		sum += c.Amount
	}
	return sum
}

// Balanced reports whether the statement adds up: closing is the opening
// plus what came in less what went out.
func (s Statement) Balanced() bool {
	return s.Closing == s.Opening+s.TopUps+s.Transfers-s.Charged()+s.Refunds
}
