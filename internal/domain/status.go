package domain

import "fmt"

// Status is where a message stands (docs/api.md, webhooks).
type Status string

// The statuses. SENDING → SENT → DELIVERED → READ is the progress;
// FAILED and CANCELED are side exits. HELD is a message the fraud guard
// stopped at acceptance: it waits for an operator, who releases it
// (HELD → SENDING, the one move no report makes) or rejects it
// (HELD → FAILED), unless its integrator cancels it first (HELD →
// CANCELED); it is never handed over while held.
const (
	Held      Status = "HELD"
	Sending   Status = "SENDING"
	Sent      Status = "SENT"
	Delivered Status = "DELIVERED"
	Read      Status = "READ"
	Failed    Status = "FAILED"
	Canceled  Status = "CANCELED"
)

// Statuses lists every status a message reaches on its way, in progress
// order, side exits last: the usage counts' columns. Held, a pause before
// the way, is apart (ParseStatus reads it; usage counts a held message in
// no status column).
var Statuses = []Status{Sending, Sent, Delivered, Read, Failed, Canceled}

// ParseStatus reads a status as the API and the database spell it.
func ParseStatus(s string) (Status, error) {
	for _, st := range Statuses {
		if string(st) == s {
			return st, nil
		}
	}
	if s == string(Held) {
		return Held, nil
	}
	return "", fmt.Errorf("unknown status %q", s)
}

// rank orders the delivery progress; side exits have none (-1).
func (s Status) rank() int {
	switch s {
	case Sending:
		return 0
	case Sent:
		return 1
	case Delivered:
		return 2
	case Read:
		return 3
	}
	return -1
}

// Order sorts statuses in the order a message can reach them: the progress
// first, then the side exits. It breaks ties between history entries
// stamped in the same millisecond.
func (s Status) Order() int {
	if r := s.rank(); r >= 0 {
		return r + 1
	}
	if s == Held {
		return 0
	}
	return 10
}

// Final reports whether no further status can follow for the integrator.
// DELIVERED is final (the seed says so) although READ may still follow on
// WhatsApp and RCS.
func (s Status) Final() bool {
	return s == Delivered || s == Read || s == Failed || s == Canceled
}

// Open reports whether the message still waits for an outcome.
func (s Status) Open() bool { return s == Sending || s == Sent }

// Path returns the statuses a message passes through to get from s to
// target, in order, or nil when target would move it backwards or out of a
// terminal state. A DELIVERED that arrives before SENT yields both.
func (s Status) Path(target Status) []Status {
	if s == Held {
		switch target {
		case Sending, Failed, Canceled:
			return []Status{target}
		}
		return nil
	}
	if s == Failed || s == Canceled || s == Read {
		return nil
	}
	switch target {
	case Failed:
		if s.Open() {
			return []Status{Failed}
		}
		return nil
	case Canceled:
		if s == Sending {
			return []Status{Canceled}
		}
		return nil
	}
	from, to := s.rank(), target.rank()
	if to <= from || from < 0 {
		return nil
	}
	steps := []Status{Sent, Delivered, Read}
	return steps[from:to]
}
