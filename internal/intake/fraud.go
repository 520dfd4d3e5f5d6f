package intake

import (
	"context"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/fraud"
	"github.com/msgsvc/msgsvc/internal/phone"
)

// geo refuses a send to a country outside the account's allowed
// countries, before anything is planned or charged.
func geo(a domain.Account, numbers []phone.Number) error {
	if a.Fraud.Countries == nil && a.Fraud.Narrowed == nil && a.FraudDefaults.AllowedCountries == nil {
		return nil // every country: the common case reads nothing more
	}
	rules := a.FraudRulesOf()
	ccs := make([]string, len(numbers))
	for i, n := range numbers {
		ccs[i] = n.CountryCode
	}
	return fraud.Geo(rules, ccs, recipientPath)
}

// guarded is the account a send's messages are checked for by the fraud
// guard, nil when none of its rules is on.
func guarded(a domain.Account) *domain.Account {
	if a.Fraud.Rules == nil && !a.FraudDefaults.Any() {
		return nil
	}
	if a.Fraud.Rules != nil && !a.Fraud.Rules.Any() {
		return nil
	}
	return &a
}

// undo is a message as it was before the guard's decision changed it, so
// that a group run again after a conflict decides afresh.
type undo struct {
	at int
	m  domain.Message
}

// checkFraud runs the fraud guard over the group's sends whose accounts
// have rules (not those already refused), applies its decisions to their
// messages and, for a send with an idempotency key, renders the
// remembered answer again so that a replay shows the decisions too.
func (s *Service) checkFraud(ctx context.Context, tx SendTx, sends []pendingSend, skip []bool, now time.Time) error {
	var fs []fraud.Send
	var at []int
	for i := range sends {
		snd := &sends[i]
		if len(snd.undo) > 0 { // a run before this one decided
			for _, u := range snd.undo {
				snd.messages[u.at] = u.m
			}
			snd.undo = nil
			if err := snd.rerender(); err != nil {
				return err
			}
		}
		if snd.guard == nil || skip[i] {
			continue
		}
		fs = append(fs, fraud.Send{Account: *snd.guard, Messages: snd.messages})
		at = append(at, i)
	}
	if len(fs) == 0 {
		return nil
	}
	g := s.guard
	if g == nil {
		g = fraud.New(fraud.Config{})
	}
	ds, err := g.Check(ctx, tx, now, fs)
	if err != nil || len(ds) == 0 {
		return err
	}
	changed := map[int]bool{}
	for _, d := range ds {
		snd := &sends[at[d.Send]]
		m := &snd.messages[d.Message]
		snd.undo = append(snd.undo, undo{at: d.Message, m: *m})
		fraud.Apply(m, d.FraudDecision, now)
		changed[at[d.Send]] = true
	}
	for i := range changed {
		if err := sends[i].rerender(); err != nil {
			return err
		}
	}
	return nil
}

// rerender renders the answer remembered under the send's idempotency
// key from its messages as they stand.
func (snd *pendingSend) rerender() error {
	if snd.idem == nil || snd.respond == nil {
		return nil
	}
	status, body, err := snd.respond(snd.messages)
	if err != nil {
		return err
	}
	snd.idem.StatusCode, snd.idem.Response = status, body
	return nil
}
