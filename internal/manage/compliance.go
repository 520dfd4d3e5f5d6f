package manage

import (
	"context"
	"errors"
	"strings"

	"github.com/msgsvc/msgsvc/internal/compliance"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/user"
)

// ComplianceStore is what the opt-out list and an account's compliance settings need from storage.
type ComplianceStore interface {
	compliance.OptOutStore
	SetCompliance(ctx context.Context, accountID string, c domain.Compliance) error
}

// Compliance (opt-outs, quiet hours, retention) in the panel and the management API:
// the opt-out list and the account's settings. Viewers read them; editing
// either is an admin's, like senders: taking a number off the list lets
// messages reach someone who asked for none, which is the account's legal
// exposure, not a developer's routine.

// optOutPage is the largest page of opt-outs an actor may ask for.
const optOutPage = 1000

func (s *Service) optOuts() *compliance.OptOuts {
	return &compliance.OptOuts{Store: s.st, Now: s.now}
}

// environment reads the environment of an opt-out request; "" is live,
// the one that reaches real people.
func environment(v string) (domain.Environment, error) {
	if v == "" {
		return domain.Live, nil
	}
	env, err := domain.ParseEnvironment(v)
	if err != nil {
		return "", invalid("environment", "must be test or live")
	}
	return env, nil
}

const badPhone = "must be a phone number, country code first, e.g. 14155550100 or +1 415 555 0100"

// digits reads a number as people write it when they copy it from
// elsewhere ("+1 (415) 555-0100"): the API's own form is digits only.
func digits(phone string) string {
	phone = strings.TrimPrefix(strings.TrimSpace(phone), "+")
	return strings.NewReplacer(" ", "", "-", "", "(", "", ")", "", ".", "").Replace(phone)
}

// OptOuts pages through an account's opt-outs in one environment, in the
// order they were recorded (limit 1 to 1000; 0 means 100).
func (s *Service) OptOuts(ctx context.Context, a Actor, accountID, env, cursor string, limit int) (compliance.Page, error) {
	acct, err := s.account(ctx, a, accountID, user.Viewer)
	if err != nil {
		return compliance.Page{}, err
	}
	e, err := environment(env)
	if err != nil {
		return compliance.Page{}, err
	}
	if limit == 0 {
		limit = 100
	}
	if limit < 1 || limit > optOutPage {
		return compliance.Page{}, invalid("limit", "must be a whole number from 1 to 1000")
	}
	p, err := s.optOuts().List(ctx, acct.ID, e, cursor, limit)
	if errors.Is(err, compliance.ErrCursor) {
		return p, invalid("cursor", compliance.ErrCursor.Error())
	}
	return p, err
}

// AddOptOut opts a number out of the account's messages in one
// environment; added is false when it already was (the first record, with
// its source and time, stays).
func (s *Service) AddOptOut(ctx context.Context, a Actor, accountID, env, phone string) (o domain.OptOut, added bool, err error) {
	acct, err := s.account(ctx, a, accountID, user.Admin)
	if err != nil {
		return o, false, err
	}
	e, err := environment(env)
	if err != nil {
		return o, false, err
	}
	// Recorded as who did it: the account's own admin, or an operator.
	source := domain.OptOutAccount
	if a.Operator() {
		source = domain.OptOutOperator
	}
	o, added, err = s.optOuts().Add(ctx, acct.ID, e, digits(phone), source)
	if errors.Is(err, compliance.ErrPhone) {
		return o, false, invalid("phone", badPhone)
	}
	return o, added, err
}

// RemoveOptOut opts a number back in; a number that was not opted out is
// ErrNotFound.
func (s *Service) RemoveOptOut(ctx context.Context, a Actor, accountID, env, phone string) error {
	acct, err := s.account(ctx, a, accountID, user.Admin)
	if err != nil {
		return err
	}
	e, err := environment(env)
	if err != nil {
		return err
	}
	removed, err := s.optOuts().Remove(ctx, acct.ID, e, digits(phone))
	switch {
	case errors.Is(err, compliance.ErrPhone):
		return invalid("phone", badPhone)
	case err != nil:
		return err
	case !removed:
		return ErrNotFound
	}
	return nil
}

// Compliance reads the account's compliance settings.
func (s *Service) Compliance(ctx context.Context, a Actor, accountID string) (domain.Compliance, error) {
	acct, err := s.account(ctx, a, accountID, user.Viewer)
	if err != nil {
		return domain.Compliance{}, err
	}
	return acct.Compliance, nil
}

// SetCompliance replaces the account's compliance settings and returns them
// as stored (the quiet-hours window in its normal form). Every invalid
// field is named; a refused change changes nothing.
func (s *Service) SetCompliance(ctx context.Context, a Actor, accountID string, c domain.Compliance) (domain.Compliance, error) {
	acct, err := s.account(ctx, a, accountID, user.Admin)
	if err != nil {
		return domain.Compliance{}, err
	}
	var p problems
	checks := []struct {
		field string
		c     domain.Compliance
	}{
		{"quietHours", domain.Compliance{QuietHours: c.QuietHours}},
		{"retentionDays", domain.Compliance{RetentionDays: c.RetentionDays}},
		{"optOutReply", domain.Compliance{OptOutReply: c.OptOutReply}},
		{"optInReply", domain.Compliance{OptInReply: c.OptInReply}},
	}
	// Each setting is checked alone so that the error names its field.
	for _, ch := range checks {
		if _, err := compliance.CheckSettings(ch.c); err != nil {
			p.add(ch.field, err.Error())
		}
	}
	if err := p.err("The compliance settings are not valid."); err != nil {
		return domain.Compliance{}, err
	}
	return compliance.SetSettings(ctx, s.st, acct.ID, c)
}
