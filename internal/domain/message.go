package domain

import "time"

// Campaign is one send request: one or many messages.
type Campaign struct {
	ID          string
	AccountID   string
	KeyID       string
	Env         Environment
	Type        Channel
	CallbackURL string
	Total       int
	CreatedAt   time.Time
}

// Message is one recipient of a campaign, and its place in the dispatch
// queue: NextAttemptAt and LeaseOwner say when it is due and who holds it.
type Message struct {
	ID          string
	CampaignID  string
	AccountID   string
	Env         Environment
	To          string
	CountryCode string
	From        string  // the sender it goes out with; "" for the route's own
	Type        Channel // what was asked for
	Channel     Channel // what carries it (SMS after an RCS fallback)
	Body        string
	Content     Content
	Status      Status
	Segments    int
	Encoding    string
	Credits     int64 // price of the message, micro-credits
	Charged     int64 // what was debited and not yet refunded (0 for test keys)
	Provider    string
	ProviderRef string
	// Route, Cost and CostCurrency are what the provider's hand-over cost
	// the operator (micro-units; "" currency when the provider has no cost
	// for the destination). Never shown to integrators.
	Route         string
	Cost          int64
	CostCurrency  string
	ErrorCode     string
	ErrorMessage  string
	Reference     string
	CallbackURL   string
	CreatedAt     time.Time
	UpdatedAt     time.Time
	SentAt        time.Time
	DeliveredAt   time.Time
	ReadAt        time.Time
	FailedAt      time.Time
	CanceledAt    time.Time
	ScheduledAt   time.Time
	ExpiresAt     time.Time
	NextAttemptAt time.Time // zero when not waiting for dispatch
	LeaseOwner    string
	Attempts      int
	// Upline is what each account above the sender was charged for the
	// message, parent first; nil for a top-level account's message and for
	// test keys. Refunds reach every level through it.
	Upline []Level
	// BillDelivery: the sender's billing was on delivery when the send was
	// accepted, so a message that ends FAILED (or expires) after hand-over
	// is refunded at every level.
	BillDelivery bool
	// Fraud is the fraud guard's decision on the message, nil when no
	// rule stopped it. Shown to operators only.
	Fraud *FraudDecision
	// HeldAt is when the fraud guard held it (zero if never).
	HeldAt time.Time
}

// Stamp records that the message reached status at a time. The history is
// read back from these stamps (each status is reached at most once).
func (m *Message) Stamp(status Status, at time.Time) {
	switch status {
	case Sent:
		m.SentAt = at
	case Delivered:
		m.DeliveredAt = at
	case Read:
		m.ReadAt = at
	case Failed:
		m.FailedAt = at
	case Canceled:
		m.CanceledAt = at
	case Held:
		m.HeldAt = at
	}
	m.Status = status
	m.UpdatedAt = at
}

// StatusAt is one step of a message's history.
type StatusAt struct {
	Status Status
	At     time.Time
}

// History lists the statuses the message reached, oldest first. Progress
// order breaks ties between steps stamped in the same millisecond (a
// DELIVERED that came before its SENT).
// Billed is the credits a message shows its account: for a live message
// what it was finally charged (what was debited and not refunded, so 0
// once refunded in full), for a test message, which is never charged,
// what it would cost. Credits keeps the price, which the ledger's debit
// matches whatever happened later.
func (m Message) Billed() int64 {
	if m.Env.Live() {
		return m.Charged
	}
	return m.Credits
}

func (m Message) History() []StatusAt {
	h := []StatusAt{{Sending, m.CreatedAt}}
	if !m.HeldAt.IsZero() {
		h[0] = StatusAt{Held, m.HeldAt}
		if m.Fraud != nil && m.Fraud.Resolution == HoldReleased {
			h = append(h, StatusAt{Sending, m.Fraud.resolvedAt(m.HeldAt)})
		}
	}
	for _, s := range []StatusAt{{Sent, m.SentAt}, {Delivered, m.DeliveredAt}, {Read, m.ReadAt}, {Failed, m.FailedAt},
		{Canceled, m.CanceledAt}} {
		if !s.At.IsZero() {
			h = append(h, s)
		}
	}
	for i := 1; i < len(h); i++ { // insertion sort: at most six entries
		for j := i; j > 0 && h[j].before(h[j-1]); j-- {
			h[j], h[j-1] = h[j-1], h[j]
		}
	}
	return h
}

func (a StatusAt) before(b StatusAt) bool {
	if !a.At.Equal(b.At) {
		return a.At.Before(b.At)
	}
	return a.Status.Order() < b.Status.Order()
}

// Cancelable reports whether the message still waits for dispatch and is
// not held by a dispatcher right now (a lease that ran out belongs to
// nobody). A message the fraud guard holds is cancelable too: it has not
// been handed over, and its integrator may give up on it rather than wait
// for an operator.
func (m Message) Cancelable(now time.Time) bool {
	return m.Status == Held || m.Status == Sending && (m.LeaseOwner == "" || !m.NextAttemptAt.After(now))
}
