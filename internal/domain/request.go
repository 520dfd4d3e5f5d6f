package domain

import "time"

// CredentialKind is what a principal proved who it is with.
type CredentialKind string

// Credential kinds.
const (
	CredentialAPIKey   CredentialKind = "api_key"   // the integration API's keys
	CredentialSMPPUser CredentialKind = "smpp_user" // an SMPP bind's system_id and password
	CredentialTwilio   CredentialKind = "twilio"    // the Twilio-compatible front's account SID and token
	// CredentialPanel is a panel user's session: the send form and
	// campaigns from a file. Its CredentialID is the user's id, which
	// also scopes the idempotency keys of the user's uploads.
	CredentialPanel CredentialKind = "panel_user"
)

// Principal is who makes a request: the account, the credential it used
// (kind and id) and the environment that credential belongs to.
type Principal struct {
	Account      Account
	Kind         CredentialKind
	CredentialID string
	Env          Environment
	// AuthVersion, when not 0, is the auth counter that Account and the
	// credential were read at, from a cache that did not read the counter
	// for this request: a send commits only if the counter still has this
	// value in its transaction, else nothing is written and the front
	// authenticates afresh.
	AuthVersion int64
}

// Test reports whether the principal acts in the test environment.
func (p Principal) Test() bool { return !p.Env.Live() }

// Front is where a request came in.
type Front string

// Fronts.
const (
	FrontREST   Front = "rest"
	FrontSMPP   Front = "smpp"
	FrontTwilio Front = "twilio"
	FrontPanel  Front = "panel" // the web panel and its management API
)

// Origin is where a send came from; SMPP is set for a submit_sm (its user
// gets the receipt, when it asked for one), Twilio for a message created
// through the Twilio-compatible API (its status callback).
type Origin struct {
	Front  Front
	SMPP   *SMPPOrigin
	Twilio *TwilioOrigin
}

// SendRequest is a send as a front read it, in the core's types: what the
// core checks is the values, not how a wire spelt them.
type SendRequest struct {
	Channel Channel // "" when the front was given none
	// Recipients are the numbers as given; nil when the front was given
	// none. Single says the front was given one number on its own rather
	// than a list (REST's "to"), which some answers name differently.
	Recipients []string
	Single     bool
	Text       string
	Sender     string  // the sender asked for; "" for the account's default
	Content    Content // its Fallback, Quiet, SMPP and UDH are never set here
	Fallback   *FallbackRequest
	Schedule   time.Time      // zero: now
	Validity   *time.Duration // nil: the longest allowed
	// UDH makes an SMS one part of a longer message its sender cut, sent
	// whole with this header (its length octet first) as one segment.
	UDH         []byte
	Reference   string
	CallbackURL string
	Origin      Origin
	// Problems are what the front found while reading the request (a wrong
	// JSON type, an unknown field, a time that does not parse), reported
	// together with the core's. A problem whose Path is one the core
	// checks in order (channel, recipients, schedule, fallback.channel) is
	// reported where the core checks that field, and only if it does.
	Problems []FieldError
}

// FallbackRequest is the fallback an RCS send asks for.
type FallbackRequest struct {
	Channel Channel
	Text    *string // nil: the RCS text is sent as SMS
}
