package store

import (
	"context"
	"errors"

	"github.com/msgsvc/msgsvc/internal/domain"
)

var errFraudNotBuilt = errors.New("fraud store: not built yet")

// FraudDefaults reads the operator's default fraud rules.
func (s *Store) FraudDefaults(ctx context.Context) (domain.FraudRules, error) {
	return domain.FraudRules{}, errFraudNotBuilt
}

// SetFraudDefaults replaces the operator's default fraud rules.
func (s *Store) SetFraudDefaults(ctx context.Context, r domain.FraudRules) error {
	return errFraudNotBuilt
}

// SetAccountFraud replaces an account's own fraud settings.
func (s *Store) SetAccountFraud(ctx context.Context, accountID string, f domain.FraudSettings) error {
	return errFraudNotBuilt
}

// HeldMessages lists held messages, oldest first.
func (s *Store) HeldMessages(ctx context.Context, accountID string, limit int, cursor string) ([]domain.Message, string, error) {
	return nil, "", errFraudNotBuilt
}

// FraudHours reads the fraud guard's decisions by hour.
func (s *Store) FraudHours(ctx context.Context, q domain.FraudQuery) ([]domain.FraudHour, error) {
	return nil, errFraudNotBuilt
}
