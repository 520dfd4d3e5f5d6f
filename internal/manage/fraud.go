package manage

import (
	"context"
	"errors"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
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
var ErrNotHeld = errors.New("message is not held")

// FraudRules reads an account's rules in force (accountID as
// elsewhere), or the operator's defaults (defaults true, operators only).
func (s *Service) FraudRules(ctx context.Context, a Actor, accountID string, defaults bool) (domain.FraudRules, error) {
	return domain.FraudRules{}, errors.New("not built yet")
}

// SetFraudRules replaces an account's rules, or the operator's defaults.
// Operators set everything; an account's admin (and owner) may only
// narrow its own allowedCountries within the operator's list for it, the
// other fields as they stand (a change to them is ErrForbidden); roles
// below admin are ErrForbidden.
func (s *Service) SetFraudRules(ctx context.Context, a Actor, accountID string, defaults bool, in domain.FraudRules) (domain.FraudRules, error) {
	return domain.FraudRules{}, errors.New("not built yet")
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
	return HeldPage{}, errors.New("not built yet")
}

// ReleaseHeld lets a held message go out (operators): it becomes SENDING
// and is dispatched as usual. A message not held is ErrNotHeld; another
// account's or an unknown id ErrNotFound.
func (s *Service) ReleaseHeld(ctx context.Context, a Actor, messageID string) (domain.Message, error) {
	return domain.Message{}, errors.New("not built yet")
}

// RejectHeld fails a held message with FRAUD_SUSPECTED, refunded at every
// level (operators).
func (s *Service) RejectHeld(ctx context.Context, a Actor, messageID string) (domain.Message, error) {
	return domain.Message{}, errors.New("not built yet")
}

// FraudBlocksQuery selects the decisions over time: [From, To) (default
// the last 24 hours), one account's or all.
type FraudBlocksQuery struct {
	From, To  time.Time
	AccountID string
}

// FraudBlocks reads the decisions by hour, rule, account and key
// (operators), oldest hour first: the operator page's chart and table.
func (s *Service) FraudBlocks(ctx context.Context, a Actor, q FraudBlocksQuery) ([]domain.FraudHour, error) {
	return nil, errors.New("not built yet")
}
