package manage

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/user"
)

// FraudStore is what the fraud guard's settings, held messages and
// decisions need from storage.
type FraudStore interface {
	// FraudDefaults reads the operator's default rules.
	FraudDefaults(ctx context.Context) (domain.FraudRules, error)
	// SetFraudDefaults replaces them (every account's cached rules follow
	// on every node: the auth counter moves).
	SetFraudDefaults(ctx context.Context, r domain.FraudRules) error
	// SetAccountFraud replaces an account's own settings.
	SetAccountFraud(ctx context.Context, accountID string, f domain.FraudSettings) error
	// HeldMessages lists held messages, oldest first, of one account ("":
	// all), from the cursor on; the next cursor is "" at the end.
	HeldMessages(ctx context.Context, accountID string, limit int, cursor string) ([]domain.Message, string, error)
	// FraudHours reads the decisions by hour, rule, account and key.
	FraudHours(ctx context.Context, q domain.FraudQuery) ([]domain.FraudHour, error)
}

// HeldDesk releases and rejects held messages (the tracker does: a
// rejection refunds at every level, a release hands the message to the
// dispatcher). Each returns the message after.
type HeldDesk interface {
	Release(ctx context.Context, messageID, by string) (domain.Message, error)
	Reject(ctx context.Context, messageID, by string) (domain.Message, error)
}

// ErrNotHeld: the message is not (or no longer) held.
var ErrNotHeld = domain.ErrNotHeld

// FraudRules reads an account's rules in force (accountID as
// elsewhere; any role may read them), or the operator's defaults (defaults
// true, operators only).
func (s *Service) FraudRules(ctx context.Context, a Actor, accountID string, defaults bool) (domain.FraudRules, error) {
	if defaults {
		if err := operator(a); err != nil {
			return domain.FraudRules{}, err
		}
		return s.st.FraudDefaults(ctx)
	}
	acct, err := s.account(ctx, a, accountID, user.Viewer)
	if err != nil {
		return domain.FraudRules{}, err
	}
	return acct.FraudRulesOf(), nil
}

// Bounds of the rules.
const (
	maxHourlyCap     = 1_000_000
	maxBurstFactor   = 1000
	maxTrusted       = 1000
	maxCountries     = 300
	minTrustedDigits = 8
	maxTrustedDigits = 15
)

// SetFraudRules replaces an account's rules, or the operator's defaults.
// Operators set everything: for an account, allowedCountries is the list
// it may send to (null: its home country and the defaults' list), which
// also ends any narrowing of its admin; for the defaults, the list allowed
// to every account besides its home country (null: every country). An
// account's admin (or owner) may only narrow its own allowedCountries
// within the operator's list for it (null lifts its narrowing), the other
// fields as they stand: a change to them, or a country beyond the
// operator's list, is ErrForbidden; roles below admin are ErrForbidden.
func (s *Service) SetFraudRules(ctx context.Context, a Actor, accountID string, defaults bool, in domain.FraudRules) (domain.FraudRules, error) {
	if defaults {
		if err := operator(a); err != nil {
			return domain.FraudRules{}, err
		}
		in, err := checkRules(in)
		if err != nil {
			return domain.FraudRules{}, err
		}
		if err := s.st.SetFraudDefaults(ctx, in); err != nil {
			return domain.FraudRules{}, err
		}
		return in, nil
	}
	acct, err := s.account(ctx, a, accountID, user.Admin)
	if err != nil {
		return domain.FraudRules{}, err
	}
	if in, err = checkRules(in); err != nil {
		return domain.FraudRules{}, err
	}
	settings := acct.Fraud
	if a.Operator() {
		rules := in
		rules.AllowedCountries = nil
		settings = domain.FraudSettings{Countries: in.AllowedCountries, Rules: &rules}
	} else {
		if !sameRules(in, acct.FraudRulesOf()) {
			return domain.FraudRules{}, fmt.Errorf("only operators change the fraud rules; an admin may narrow allowedCountries: %w", ErrForbidden)
		}
		if ceiling := acct.FraudCeiling(); ceiling != nil {
			for _, c := range in.AllowedCountries {
				if !slices.Contains(ceiling, c) {
					return domain.FraudRules{}, fmt.Errorf("country %s is beyond the operator's list for the account: %w", c, ErrForbidden)
				}
			}
		}
		settings.Narrowed = in.AllowedCountries
	}
	if err := s.st.SetAccountFraud(ctx, acct.ID, settings); err != nil {
		return domain.FraudRules{}, err
	}
	acct.Fraud = settings
	return acct.FraudRulesOf(), nil
}

// sameRules reports whether two rule sets agree on everything but the
// countries.
func sameRules(a, b domain.FraudRules) bool {
	eqInt := func(x, y *int) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	eqF := func(x, y *float64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	ta, tb := slices.Clone(a.Trusted), slices.Clone(b.Trusted)
	slices.Sort(ta)
	slices.Sort(tb)
	return eqInt(a.PerRecipientHourly, b.PerRecipientHourly) && eqInt(a.PerRangeHourly, b.PerRangeHourly) &&
		eqF(a.BurstFactor, b.BurstFactor) && a.ActionOr() == b.ActionOr() && slices.Equal(ta, tb)
}

// checkRules checks rules as a client wrote them and returns them as
// stored: the action spelled out, lists without repeats.
func checkRules(in domain.FraudRules) (domain.FraudRules, error) {
	var p problems
	if in.AllowedCountries != nil {
		if len(in.AllowedCountries) > maxCountries {
			p.add("allowedCountries", fmt.Sprintf("must list at most %d calling codes", maxCountries))
		}
		out := []string{}
		for i, c := range in.AllowedCountries {
			if !digitsOf(c, 1, 3) {
				p.add(fmt.Sprintf("allowedCountries[%d]", i), "must be a calling code: 1 to 3 digits, such as 55 or 1")
				continue
			}
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
		in.AllowedCountries = out
	}
	capCheck := func(field string, v *int) {
		if v != nil && (*v < 1 || *v > maxHourlyCap) {
			p.add(field, fmt.Sprintf("must be a whole number from 1 to %d, or null for off", maxHourlyCap))
		}
	}
	capCheck("perRecipientHourly", in.PerRecipientHourly)
	capCheck("perRangeHourly", in.PerRangeHourly)
	if f := in.BurstFactor; f != nil && (math.IsNaN(*f) || *f < 1 || *f > maxBurstFactor) {
		p.add("burstFactor", fmt.Sprintf("must be a number from 1 to %d, or null for off", maxBurstFactor))
	}
	switch in.Action {
	case "":
		in.Action = domain.FraudBlock
	case domain.FraudBlock, domain.FraudHold, domain.FraudAlert:
	default:
		p.add("action", "must be block, hold or alert")
	}
	if len(in.Trusted) > maxTrusted {
		p.add("trusted", fmt.Sprintf("must list at most %d numbers", maxTrusted))
	}
	trusted := []string{}
	for i, n := range in.Trusted {
		n = strings.TrimPrefix(n, "+")
		if !digitsOf(n, minTrustedDigits, maxTrustedDigits) {
			p.add(fmt.Sprintf("trusted[%d]", i), "must be a number, country code first, 8 to 15 digits")
			continue
		}
		if !slices.Contains(trusted, n) {
			trusted = append(trusted, n)
		}
	}
	in.Trusted = trusted
	return in, p.err("The fraud rules are not valid.")
}

func digitsOf(s string, lo, hi int) bool {
	if len(s) < lo || len(s) > hi {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// HeldQuery selects held messages: one account's (operators may leave it
// "" for all), a page of Limit (default 100, at most 1000) from Cursor.
type HeldQuery struct {
	AccountID string
	Limit     int
	Cursor    string
}

// HeldPage is a page of held messages, each with its decision
// (Message.Fraud); NextCursor "" at the end.
type HeldPage struct {
	Messages   []domain.Message
	NextCursor string
}

// HeldMessages lists held messages, oldest first (operators).
func (s *Service) HeldMessages(ctx context.Context, a Actor, q HeldQuery) (HeldPage, error) {
	if err := operator(a); err != nil {
		return HeldPage{}, err
	}
	switch {
	case q.Limit == 0:
		q.Limit = 100
	case q.Limit < 0 || q.Limit > 1000:
		return HeldPage{}, invalid("limit", "must be from 1 to 1000")
	}
	msgs, next, err := s.st.HeldMessages(ctx, q.AccountID, q.Limit, q.Cursor)
	if errors.Is(err, domain.ErrNotFound) {
		return HeldPage{}, invalid("cursor", "is not a cursor this list gave")
	}
	if err != nil {
		return HeldPage{}, err
	}
	if msgs == nil {
		msgs = []domain.Message{}
	}
	return HeldPage{Messages: msgs, NextCursor: next}, nil
}

// ReleaseHeld lets a held message go out (operators): it becomes SENDING
// and is dispatched as usual. A message not held is ErrNotHeld; an unknown
// id ErrNotFound.
func (s *Service) ReleaseHeld(ctx context.Context, a Actor, messageID string) (domain.Message, error) {
	if err := s.heldDesk(a); err != nil {
		return domain.Message{}, err
	}
	return s.held.Release(ctx, messageID, a.Email)
}

// RejectHeld fails a held message with FRAUD_SUSPECTED, refunded at every
// level (operators).
func (s *Service) RejectHeld(ctx context.Context, a Actor, messageID string) (domain.Message, error) {
	if err := s.heldDesk(a); err != nil {
		return domain.Message{}, err
	}
	return s.held.Reject(ctx, messageID, a.Email)
}

func (s *Service) heldDesk(a Actor) error {
	if err := operator(a); err != nil {
		return err
	}
	if s.held == nil {
		return errors.New("no desk for held messages is configured")
	}
	return nil
}

// FraudBlocksQuery selects the decisions over time: [From, To) (default
// the last 24 hours), one account's or all.
type FraudBlocksQuery struct {
	From, To  time.Time
	AccountID string
}

// maxBlocksSpan bounds the span of one read of the decisions.
const maxBlocksSpan = 31 * 24 * time.Hour

// FraudBlocks reads the decisions by hour, rule, account and key
// (operators), oldest hour first: the operator page's chart and table.
func (s *Service) FraudBlocks(ctx context.Context, a Actor, q FraudBlocksQuery) ([]domain.FraudHour, error) {
	if err := operator(a); err != nil {
		return nil, err
	}
	if q.To.IsZero() {
		q.To = s.now().UTC()
	}
	if q.From.IsZero() {
		q.From = q.To.Add(-24 * time.Hour)
	}
	if !q.From.Before(q.To) || q.To.Sub(q.From) > maxBlocksSpan {
		return nil, invalid("from", "must be before to, at most 31 days apart")
	}
	hs, err := s.st.FraudHours(ctx, domain.FraudQuery{From: q.From, To: q.To, AccountID: q.AccountID})
	if hs == nil {
		hs = []domain.FraudHour{}
	}
	return hs, err
}
