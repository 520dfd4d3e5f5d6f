package domain

import "time"

// OptOut is a recipient who asked an account to send nothing more, in one
// environment. Seq is its place in the write order (cursors).
type OptOut struct {
	Seq       int64
	AccountID string
	Env       Environment
	Phone     string
	Channel   Channel // the channel of the stop word; "" when an operator added it
	Source    string  // OptOutReply, OptOutAccount or OptOutOperator
	CreatedAt time.Time
}

// Where an opt-out came from: the number's own stop word, a user of the
// account (an admin or owner, in the panel or the management API), or an
// operator (the panel, the management API or the command line).
const (
	OptOutReply    = "reply"
	OptOutAccount  = "account"
	OptOutOperator = "operator"
)

// Redaction says what personal data becomes when it is no longer kept; the
// store only applies it. Text is erased.
type Redaction struct {
	Phone     func(phone string) string         // the keyed hash of a number
	EventBody func(body string) (string, error) // a webhook body with its number hashed and its text erased
}

// RetentionRow is what the retention sweep needs to know of one row: its
// id, its state (a message's status, a webhook event's delivery state),
// and the phone number or body it may still have to redact.
type RetentionRow struct {
	ID, State, Phone, Body string
}

// The kinds of rows that hold personal data, as the retention sweep walks
// them.
const (
	RetainMessages = "messages"
	RetainInbound  = "inbound"
	RetainEvents   = "events"
)
