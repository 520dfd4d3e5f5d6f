package domain

import "time"

// SMPPUser is a login of an account's ESMEs to the SMPP server: one
// environment, a system_id unique across accounts, its password stored
// only as a hash, and the most binds it may hold at once.
type SMPPUser struct {
	ID           string
	AccountID    string
	Env          Environment
	SystemID     string
	PasswordHash string
	MaxBinds     int
	CreatedAt    time.Time
}

// SMPPOrigin marks a message that came in over SMPP.
type SMPPOrigin struct {
	User    string `json:"user"`
	Receipt bool   `json:"receipt,omitempty"` // registered_delivery asked for a receipt
}

// SMPPItem is a deliver_sm waiting for an SMPP user's receiving bind (a
// receipt or a reply). It stays until a bind acknowledges it or it
// expires; NextAttemptAt and LeaseOwner make it a leased queue's row.
type SMPPItem struct {
	ID            string
	UserID        string
	AccountID     string
	Env           Environment
	MessageID     string
	Source        string
	Dest          string
	ESMClass      int
	Text          string // the short_message as text (a receipt's is ASCII)
	State         int    // message_state of a receipt; 0 for a reply
	CreatedAt     time.Time
	ExpiresAt     time.Time
	NextAttemptAt time.Time
	LeaseOwner    string
}
