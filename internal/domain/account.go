package domain

import "time"

// Limits are an account's requests per minute; 0 means unlimited.
type Limits struct {
	TierRPM, SendRPM, StatusRPM, MediaRPM int
}

// Account is a customer of the service.
type Account struct {
	ID                string
	Name              string
	Tier              string
	Currency          string
	CountryCode       string
	Balance           int64 // micro-credits
	BalanceUpdatedAt  time.Time
	WebhookSecret     string
	WebhookSecretPrev string // still signed with during a rotation
	SecretRotatedAt   time.Time
	Limits            Limits
	WAQualityTier     int
	RCSFallback       bool
	IPAllowlist       []string
	Prices            string // the account's own price sheet (overrides over its plan), "" for none
	// PricePlanID is the plan the account sells at ("" for none: the
	// defaults), and PlanPrices that plan's sheet, copied onto the
	// account whenever either changes so that reading an account reads
	// its prices.
	PricePlanID string
	PlanPrices  string
	// PriceTable is Prices parsed when the account was read, so that a send
	// does not parse JSON; nil when it was not (or Prices does not parse).
	PriceTable *Prices
	Senders    Senders
	CreatedAt  time.Time
	Compliance Compliance
	// WebhookURL receives the account's own events (balance.low,
	// spend.daily); "" for none.
	WebhookURL string
	Alerts     Alerts
	// ParentID is the reseller the account was created under; "" for one
	// of the operator's own (the top of a tree).
	ParentID string
	// Reseller says the account may have children of its own.
	Reseller bool
	// Billing is when its messages are charged for good; "" is
	// BillSubmit.
	Billing Billing
	// SuspendedAt is when the account stopped sending because it, or an
	// account above it, was suspended; zero while it is not. SuspendedBy
	// is the account whose suspension it was (itself, or that ancestor),
	// so that resuming one subtree leaves a suspension made above it.
	SuspendedAt time.Time
	SuspendedBy string
	// Fraud are the account's own fraud settings; FraudDefaults the
	// operator's default rules, read with the account (so the key cache
	// keeps both and a change to either moves the auth counter).
	Fraud         FraudSettings
	FraudDefaults FraudRules
}

// BillsOnDelivery reports whether a message that fails after hand-over is
// refunded.
func (a Account) BillsOnDelivery() bool { return a.Billing == BillDelivery }

// Suspended reports whether the account may not send.
func (a Account) Suspended() bool { return !a.SuspendedAt.IsZero() }

// Billing is when an account's messages are charged for good.
type Billing string

// Billings.
const (
	// BillSubmit charges a message when it is accepted (refunded only
	// when msgsvc itself fails it before any provider took it).
	BillSubmit Billing = "submit"
	// BillDelivery refunds, at every level of the tree, a message that
	// ends FAILED or EXPIRED after it was handed over.
	BillDelivery Billing = "delivery"
)

// MaxDepth is how many levels of accounts may stand below the operator.
const MaxDepth = 3

// PriceList is the account's price table: the one resolved when the
// account was read, else its plan and own sheets resolved now (an account
// built by hand, or a table that does not parse, whose error the send
// then reports).
func (a *Account) PriceList() (Prices, error) {
	if a.PriceTable != nil {
		return *a.PriceTable, nil
	}
	return ResolvePrices(a.PlanPrices, a.Prices, a.CountryCode)
}

// Compliance are an account's compliance settings (quiet hours, retention, opt-out replies);
// the compliance package checks them before they are stored.
type Compliance struct {
	QuietHours    string // "21:00-08:00" in the recipient's local time; "" for none
	RetentionDays int    // 0: kept until deleted
	OptOutReply   string // confirmation sent back on a stop word; "" for none
	OptInReply    string // confirmation sent back on a start word; "" for none
}

// Senders are an account's approved senders by channel.
type Senders map[Channel]ChannelSenders

// ChannelSenders are the approved senders of one channel and its default.
type ChannelSenders struct {
	Values  []string `json:"values"`
	Default string   `json:"default,omitempty"`
}

// APIKey is a stored key: only its hash and a display prefix, never the key.
type APIKey struct {
	ID         string
	AccountID  string
	Env        Environment
	Prefix     string
	Hash       string
	Name       string
	CreatedAt  time.Time
	LastUsedAt time.Time
	RevokedAt  time.Time
}

// Sender states: a request waits for an operator, who approves or rejects it.
const (
	SenderPending  = "PENDING"
	SenderApproved = "APPROVED"
	SenderRejected = "REJECTED"
)

// Sender is a sender of an account on a channel: an alphanumeric sender ID
// or a number (SMS), a business number (WhatsApp), an agent (RCS). Only an
// approved one may be used and decides who owns inbound messages.
type Sender struct {
	ID          string
	AccountID   string
	Channel     Channel
	Value       string
	Default     bool
	Status      string // "" when adding is APPROVED: the caller decided
	Reason      string // why an operator rejected it
	RequestedBy string // who asked for it (an email, or "console")
	DecidedBy   string
	CreatedAt   time.Time
	DecidedAt   time.Time
}

// Limit request states.
const (
	LimitPending  = "PENDING"
	LimitApproved = "APPROVED"
	LimitRejected = "REJECTED"
)

// LimitRequest is an account's request for higher limits and, once an
// operator decided it, what was granted (Tier, Limits) or why not (Reason).
type LimitRequest struct {
	ID            string
	AccountID     string
	RequestedBy   string // the requester's email
	Status        string
	MonthlyVolume int64
	UseCase       string
	Justification string
	Tier          string
	Limits        Limits
	Reason        string
	DecidedBy     string // the operator's email
	CreatedAt     time.Time
	DecidedAt     time.Time
}

// User is a person who logs in to the panel. Operators belong to no
// account (AccountID "") and work across all of them.
type User struct {
	ID           string
	AccountID    string
	Email        string
	Role         string
	PasswordHash string
	CreatedAt    time.Time
}

// Session is a panel login.
type Session struct {
	TokenHash  string
	UserID     string
	CreatedAt  time.Time
	LastSeenAt time.Time
	ExpiresAt  time.Time
}
