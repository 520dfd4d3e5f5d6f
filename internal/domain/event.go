package domain

import "time"

// Webhook event states.
const (
	EventPending   = "pending"
	EventDelivered = "delivered"
	EventFailed    = "failed" // retry schedule exhausted
	EventGone      = "gone"   // the receiver answered 410
	// EventNone: the send had no callbackUrl. The event is kept for the
	// events feed only; nothing is delivered.
	EventNone = "none"
)

// Event is one webhook event and its place in the delivery queue. Body is
// fixed when the event is written, so every retry sends the same bytes.
type Event struct {
	ID         string
	AccountID  string
	Env        Environment
	CampaignID string
	MessageID  string
	Event      string
	URL        string
	Body       string
	// Form, when set, is what the webhook worker posts instead of Body: the
	// Twilio-compatible API's callback of the same step or reply, its form
	// parameters encoded, signed X-Twilio-Signature. Body stays what the
	// events feed shows.
	Form          string
	State         string
	Attempts      int
	NextAttemptAt time.Time
	LeaseOwner    string
	LastStatus    int
	LastError     string
	CreatedAt     time.Time
	DeliveredAt   time.Time
	// NoEarlier, when an event is written, says that its message has no
	// event in the table before this one's batch (the message had taken
	// no status step: tracking.Change.FirstSteps), so InsertEvents need not
	// look there for one it must wait behind. It is not stored.
	NoEarlier bool
	// Then, on an event handed over in memory, holds the events of its
	// message written after it in the same batch and leased to the same
	// node: whoever posts this event posts them after it, in order, each
	// once the one before it was delivered. A claim never fills it: in the
	// table each event waits for its own turn. It is not stored.
	Then []Event
}

// Attempt is one try at delivering an event.
type Attempt struct {
	ID          string
	EventID     string
	AttemptedAt time.Time
	StatusCode  int // 0 when no HTTP answer came
	Duration    time.Duration
	Error       string
	Response    string // truncated body of the answer
}

// AttemptOutcome is what a delivery attempt changes: the attempt's record
// and the event's new state. NextAttemptAt is zero when the event is done.
type AttemptOutcome struct {
	Attempt       Attempt
	State         string
	NextAttemptAt time.Time
	// AccountID and URL name the event's receiver (a 410 stops its queue).
	AccountID, URL string
	// Retried: the event had failed attempts before this one, so its
	// receiver had not been answering.
	Retried bool
}

// Inbound is a message a recipient sent to the account.
type Inbound struct {
	ID         string
	AccountID  string
	Env        Environment
	Phone      string
	Channel    Channel
	Body       string
	CampaignID string
	// MessageID is the message it answers: the account's latest message
	// to Phone within the reply window ("" when none, or recorded before
	// replies kept it).
	MessageID  string
	Provider   string
	ReceivedAt time.Time
	// ProviderRef is the provider's id of the message, when it gives one;
	// a provider's id is recorded once.
	ProviderRef string
}

// ReplyFilter selects an account's replies (Store.Replies).
type ReplyFilter struct {
	AccountID string
	Env       Environment // "" for both
	Phone     string      // "" for any
	Before    string      // a reply id: those older than it
	Limit     int
}

// FeedEvent is an event with its position in its environment's events
// feed. Positions only grow: an event that becomes readable later always
// gets a higher one, so a reader that remembers the last position it saw
// never misses an event.
type FeedEvent struct {
	Event
	Pos int64
}
