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

// SMPPBind is a bind of an SMPP user open on some node, as operators see
// it: from where, since when, and which kind (transmitter, receiver,
// transceiver).
type SMPPBind struct {
	ID      string
	UserID  string
	Node    string
	Addr    string
	Type    string
	BoundAt time.Time
}

// SMPPRefusal is a refused bind or submit_sm of an SMPP user: when, from
// where, the command, the command_status the peer got and why.
type SMPPRefusal struct {
	ID        string
	UserID    string
	AccountID string
	At        time.Time
	Addr      string
	Command   string
	Status    string
	Reason    string
}

// SMPPActivity is what operators see of an SMPP user besides its
// settings: its open binds on every node, when it last bound (zero: never)
// and its recent refusals, newest first.
type SMPPActivity struct {
	Binds       []SMPPBind
	LastBoundAt time.Time
	Refusals    []SMPPRefusal
}
