package domain

import "time"

// TwilioCredentialKind tells an account SID (AC…, with its auth token)
// from a Twilio API key (SK…, with its secret, used with an AC… in the
// path).
type TwilioCredentialKind string

// Twilio credential kinds.
const (
	TwilioAccountSid TwilioCredentialKind = "account"
	TwilioAPIKey     TwilioCredentialKind = "key"
)

// TwilioCredential is a login of an account's Twilio-compatible clients:
// one environment, a SID unique across accounts and its secret. The secret
// is kept as given (not hashed): callbacks are signed with an account
// SID's auth token, as Twilio signs them.
type TwilioCredential struct {
	Sid       string // AC<32 hex> or SK<32 hex>
	Kind      TwilioCredentialKind
	AccountID string
	Env       Environment
	Secret    string // the auth token, or the API key's secret
	// Parent is, for an API key, the account SID it acts for; "" for an
	// account SID.
	Parent    string
	Name      string // friendly name
	CreatedAt time.Time
}

// TwilioOrigin marks a message created through the Twilio-compatible API:
// the account SID it was created under (its token signs the callbacks) and
// where its status changes are posted.
type TwilioOrigin struct {
	AccountSid     string `json:"accountSid"`
	StatusCallback string `json:"statusCallback,omitempty"`
}

// TwilioNumber is what the Twilio-compatible API keeps of one of an
// account's approved numbers: where replies to it are posted (its
// SmsUrl) and how.
type TwilioNumber struct {
	AccountID string
	Phone     string // E.164
	SmsURL    string
	SmsMethod string // POST or GET
	UpdatedAt time.Time
}

// Webhook event kinds of the Twilio-compatible API: posted form-encoded
// and signed X-Twilio-Signature with the auth token of the event's
// account SID, instead of the native JSON and its signature.
const (
	EventTwilioStatus  = "twilio.status"
	EventTwilioInbound = "twilio.inbound"
)
