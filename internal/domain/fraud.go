package domain

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// FraudAction is what the fraud guard does with a message a rule stops.
type FraudAction string

// The actions (docs/fraud.md).
const (
	// FraudBlock fails the message with CodeFraudSuspected, charged
	// nothing at any level.
	FraudBlock FraudAction = "block"
	// FraudHold keeps the message HELD, charged, until an operator
	// releases it (it goes out) or rejects it (FAILED, refunded); after
	// HoldFor it is rejected.
	FraudHold FraudAction = "hold"
	// FraudAlert only records the decision and alerts: the message goes
	// out as usual. For tuning the rules.
	FraudAlert FraudAction = "alert"
)

// HoldFor is how long a held message waits for an operator before it is
// rejected.
const HoldFor = 24 * time.Hour

// The rules, as their decisions and the API name them.
const (
	RulePerRecipient = "perRecipientHourly"
	RulePerRange     = "perRangeHourly"
	RuleBurst        = "burstFactor"
)

// What a rule counts: a recipient's number, a range (the number without
// its last RangeDigits digits) or a destination country (calling code).
const (
	ScopeRecipient = "recipient"
	ScopeRange     = "range"
	ScopeCountry   = "country"
)

// RangeDigits is how many trailing digits a number's range leaves out.
const RangeDigits = 3

// RangeOf is the range of a number: its digits without the last
// RangeDigits (the whole number when it is not longer than that).
func RangeOf(number string) string {
	if len(number) <= RangeDigits {
		return number
	}
	return number[:len(number)-RangeDigits]
}

// FraudRules are the fraud guard's rules: the operator's defaults, or an
// account's own. A nil rule is off.
type FraudRules struct {
	// AllowedCountries are the calling codes the account may send to.
	// In the operator's defaults it is the list allowed for all
	// accounts (each account's home country is added); nil allows every
	// country.
	AllowedCountries []string `json:"allowedCountries"`
	// PerRecipientHourly caps the messages to one number in a UTC hour.
	PerRecipientHourly *int `json:"perRecipientHourly"`
	// PerRangeHourly caps the messages to one range in a UTC hour.
	PerRangeHourly *int `json:"perRangeHourly"`
	// BurstFactor stops a range's or a country's hourly volume above
	// the account's trailing baseline for it times this factor.
	BurstFactor *float64 `json:"burstFactor"`
	// Action is what a rule that trips does ("" is FraudBlock).
	Action FraudAction `json:"action"`
	// Trusted numbers bypass every rule (not the allowed countries).
	Trusted []string `json:"trusted"`
}

// ActionOr is the rules' action, FraudBlock when unset.
func (r FraudRules) ActionOr() FraudAction {
	if r.Action == "" {
		return FraudBlock
	}
	return r.Action
}

// Any reports whether a rule is on (the guard counts nothing otherwise).
func (r FraudRules) Any() bool {
	return r.PerRecipientHourly != nil || r.PerRangeHourly != nil || r.BurstFactor != nil
}

// IsTrusted reports whether number bypasses the rules.
func (r FraudRules) IsTrusted(number string) bool { return slices.Contains(r.Trusted, number) }

// FraudSettings are an account's own fraud settings, stored with it.
type FraudSettings struct {
	// Countries is the operator's list for the account; nil is the
	// account's home country plus the defaults' AllowedCountries.
	Countries []string `json:"countries,omitempty"`
	// Narrowed is the account admin's own list, within the operator's
	// (the part of it outside is ignored); nil is the operator's list.
	Narrowed []string `json:"narrowed,omitempty"`
	// Rules replace the operator's default rules (all of them, the
	// countries aside) when set.
	Rules *FraudRules `json:"rules,omitempty"`
}

// IsZero reports whether the account has no settings of its own.
func (f FraudSettings) IsZero() bool {
	return f.Countries == nil && f.Narrowed == nil && f.Rules == nil
}

// FraudCeiling is the widest list of countries the operator allows the
// account: its own list, else its home country and the defaults' list
// (nil: every country).
func (a Account) FraudCeiling() []string {
	if a.Fraud.Countries != nil {
		return a.Fraud.Countries
	}
	if a.FraudDefaults.AllowedCountries == nil {
		return nil
	}
	out := []string{}
	if a.CountryCode != "" {
		out = append(out, a.CountryCode)
	}
	for _, c := range a.FraudDefaults.AllowedCountries {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// FraudRulesOf is the account's effective rules: its own or the
// operator's defaults, with the countries it may send to (the admin's
// narrowing within the operator's ceiling).
func (a Account) FraudRulesOf() FraudRules {
	r := a.FraudDefaults
	if a.Fraud.Rules != nil {
		r = *a.Fraud.Rules
	}
	ceiling := a.FraudCeiling()
	r.AllowedCountries = ceiling
	if n := a.Fraud.Narrowed; n != nil {
		out := []string{}
		for _, c := range n {
			if ceiling == nil || slices.Contains(ceiling, c) {
				out = append(out, c)
			}
		}
		r.AllowedCountries = out
	}
	return r
}

// CountryAllowed reports whether the account may send to a calling code.
func (r FraudRules) CountryAllowed(cc string) bool {
	return r.AllowedCountries == nil || slices.Contains(r.AllowedCountries, cc)
}

// FraudDecision is what the fraud guard decided about a message, kept on
// it and shown to operators: the rule that tripped and its figures.
type FraudDecision struct {
	Rule  string `json:"rule"`  // RulePerRecipient, RulePerRange or RuleBurst
	Scope string `json:"scope"` // ScopeRecipient, ScopeRange or ScopeCountry
	Key   string `json:"key"`   // the number, range or calling code counted
	// Count is the key's count in the hour, this message included.
	Count int64 `json:"count"`
	// Cap is the count the rule allows (count rules); for a burst, the
	// baseline times the factor.
	Cap int64 `json:"cap"`
	// Baseline and Factor explain a burst: the key's trailing hourly
	// baseline (at least MinBaseline) and the rules' factor.
	Baseline float64     `json:"baseline,omitempty"`
	Factor   float64     `json:"factor,omitempty"`
	Action   FraudAction `json:"action"`
	At       time.Time   `json:"at"`
	// Resolution is how a hold ended: "released", "rejected",
	// "expired" or "canceled" ("" while held, and for other actions);
	// ResolvedBy who (an operator's email, "sweeper", or "integrator"
	// for a cancel through the account's API).
	Resolution string    `json:"resolution,omitempty"`
	ResolvedBy string    `json:"resolvedBy,omitempty"`
	ResolvedAt time.Time `json:"resolvedAt,omitzero"`
}

// Resolutions of a hold.
const (
	HoldReleased = "released"
	HoldRejected = "rejected"
	HoldExpired  = "expired"
	HoldCanceled = "canceled"
)

// CanceledBy names who ended a hold by canceling the message: the
// account's own API, not an operator.
const CanceledBy = "integrator"

// EventFraudSuspected is the account alert of a rule that tripped.
const EventFraudSuspected = "fraud.suspected"

// FraudHour is one hour's decisions of one rule on one key of an account:
// what the operator's chart sums, and the mark that lets the account's
// alert go out once per rule and key an hour.
type FraudHour struct {
	Hour      time.Time // the UTC hour
	AccountID string
	Rule      string
	Scope     string
	Key       string
	Action    FraudAction
	Messages  int64
}

// FraudCount is one counter of the fraud guard: an account's messages to
// a recipient, a range or a country (Scope, Key) of an environment in a
// UTC hour (Unix hours), and the messages to add to it (N).
type FraudCount struct {
	AccountID string
	Env       Environment
	Scope     string
	Key       string
	Hour      int64
	N         int64
}

// FraudQuery selects decisions over time: [From, To) by hour; AccountID
// "" for every account.
type FraudQuery struct {
	From, To  time.Time
	AccountID string
}

// ErrDestinationNotAllowed: a recipient's country is outside the
// account's allowed countries (a *DestinationError names it).
var ErrDestinationNotAllowed = errors.New("destination not allowed")

// ErrNotHeld: the message is not (or no longer) held by the fraud guard.
var ErrNotHeld = fmt.Errorf("message is not held: %w", ErrConflict)

// DestinationError is the cause of a refused send to a country outside
// the account's allowed countries: the first such recipient.
type DestinationError struct {
	Country string // the calling code refused
	Field   string // the recipient's domain path ("recipients[2]")
}

func (e *DestinationError) Error() string {
	return "destination country " + e.Country + " is not allowed for this account"
}

// Unwrap makes errors.Is(err, ErrDestinationNotAllowed) hold.
func (e *DestinationError) Unwrap() error { return ErrDestinationNotAllowed }

// resolvedAt is when a hold ended, else def.
func (d *FraudDecision) resolvedAt(def time.Time) time.Time {
	if d == nil || d.ResolvedAt.IsZero() {
		return def
	}
	return d.ResolvedAt
}
