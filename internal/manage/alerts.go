package manage

import (
	"context"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/user"
	"github.com/msgsvc/msgsvc/internal/webhook"
)

// AlertStore is what the account webhook and the alert thresholds need
// from storage.
type AlertStore interface {
	SetAccountWebhook(ctx context.Context, accountID, url string) error
	SetAlerts(ctx context.Context, accountID string, a domain.Alerts) error
	AlertEvents(ctx context.Context, accountID string, limit int) ([]domain.Event, error)
	Attempts(ctx context.Context, eventID string) ([]domain.Attempt, error)
}

// alertsShown bounds the alerts the Alerts page lists.
const alertsShown = 20

// AlertEvents lists the account's latest alerts (balance.low,
// spend.daily), newest first, each with its delivery attempts.
func (s *Service) AlertEvents(ctx context.Context, a Actor, accountID string) ([]EventAttempts, error) {
	acct, err := s.account(ctx, a, accountID, user.Viewer)
	if err != nil {
		return nil, err
	}
	evs, err := s.st.AlertEvents(ctx, acct.ID, alertsShown)
	if err != nil {
		return nil, err
	}
	out := make([]EventAttempts, len(evs))
	for i, ev := range evs {
		out[i].Event = ev
		if out[i].Attempts, err = s.st.Attempts(ctx, ev.ID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// AccountWebhook is the URL of an account's own events ("" for none).
func (s *Service) AccountWebhook(ctx context.Context, a Actor, accountID string) (string, error) {
	acct, err := s.account(ctx, a, accountID, user.Viewer)
	return acct.WebhookURL, err
}

// SetAccountWebhook sets where the account's own events (balance.low,
// spend.daily) are posted, checked like a send's callbackUrl (https to a
// public address); "" removes it. An admin's setting, like the secret
// that signs them.
func (s *Service) SetAccountWebhook(ctx context.Context, a Actor, accountID, url string) (string, error) {
	acct, err := s.account(ctx, a, accountID, user.Admin)
	if err != nil {
		return "", err
	}
	var p problems
	s.checkWebhookURL(&p, url)
	if err := p.err("The webhook URL is not valid."); err != nil {
		return "", err
	}
	return url, s.st.SetAccountWebhook(ctx, acct.ID, url)
}

func (s *Service) checkWebhookURL(p *problems, url string) {
	if url == "" {
		return
	}
	if err := webhook.ValidateCallbackURL(url, s.allowPrivate); err != nil {
		p.add("url", err.Error())
	}
}

// Alerts are an account's alert thresholds in credits; nil is off.
type Alerts struct {
	LowBalance *float64
	DailySpend *float64
}

// maxThreshold bounds a threshold, in credits.
const maxThreshold = 1e9

// AlertSettings reads an account's alert thresholds.
func (s *Service) AlertSettings(ctx context.Context, a Actor, accountID string) (Alerts, error) {
	acct, err := s.account(ctx, a, accountID, user.Viewer)
	return alertsIn(acct.Alerts), err
}

// SetAlertSettings replaces an account's alert thresholds. A new
// low-balance threshold is a new alert: a balance already below it is
// announced by the next debit or the sweeper.
func (s *Service) SetAlertSettings(ctx context.Context, a Actor, accountID string, in Alerts) (Alerts, error) {
	acct, err := s.account(ctx, a, accountID, user.Admin)
	if err != nil {
		return Alerts{}, err
	}
	var p problems
	next := thresholds(&p, in)
	if err := p.err("The alert thresholds are not valid."); err != nil {
		return Alerts{}, err
	}
	if err := s.st.SetAlerts(ctx, acct.ID, next); err != nil {
		return Alerts{}, err
	}
	return alertsIn(next), nil
}

// SetAlertsAndWebhook sets the account webhook and the thresholds
// together, as the panel's form does: both are checked before either is
// written, so a refused form changes nothing.
func (s *Service) SetAlertsAndWebhook(ctx context.Context, a Actor, accountID, url string, in Alerts) (Alerts, error) {
	acct, err := s.account(ctx, a, accountID, user.Admin)
	if err != nil {
		return Alerts{}, err
	}
	var p problems
	s.checkWebhookURL(&p, url)
	next := thresholds(&p, in)
	if err := p.err("The account webhook or the alert thresholds are not valid."); err != nil {
		return Alerts{}, err
	}
	if err := s.st.SetAccountWebhook(ctx, acct.ID, url); err != nil {
		return Alerts{}, err
	}
	if err := s.st.SetAlerts(ctx, acct.ID, next); err != nil {
		return Alerts{}, err
	}
	return alertsIn(next), nil
}

// thresholds reads alert thresholds in credits, adding what is wrong to p.
func thresholds(p *problems, in Alerts) domain.Alerts {
	micro := func(field string, v *float64) *int64 {
		if v == nil {
			return nil
		}
		m, err := ledger.FromCredits(*v)
		switch {
		case err != nil || *v > maxThreshold:
			p.add(field, "must be a number of credits up to 1000000000, with at most 6 decimal places")
		case m < 0:
			p.add(field, "must not be negative")
		}
		return &m
	}
	return domain.Alerts{LowBalance: micro("lowBalance", in.LowBalance), DailySpend: micro("dailySpend", in.DailySpend)}
}

func alertsIn(a domain.Alerts) Alerts {
	credits := func(v *int64) *float64 {
		if v == nil {
			return nil
		}
		c := ledger.Credits(*v)
		return &c
	}
	return Alerts{LowBalance: credits(a.LowBalance), DailySpend: credits(a.DailySpend)}
}
