package api

import (
	"context"
	"net/http"

	"github.com/msgsvc/msgsvc/internal/manage"
)

// AlertAdmin manages an account's webhook for alerts and its alert settings.
type AlertAdmin interface {
	AccountWebhook(ctx context.Context, a manage.Actor, accountID string) (string, error)
	SetAccountWebhook(ctx context.Context, a manage.Actor, accountID, url string) (string, error)
	AlertSettings(ctx context.Context, a manage.Actor, accountID string) (manage.Alerts, error)
	SetAlertSettings(ctx context.Context, a manage.Actor, accountID string, in manage.Alerts) (manage.Alerts, error)
}

// The management API's account webhook and alert thresholds.

func (s *Server) manageAlertRoutes(base string) {
	s.managed("GET "+base+"/account-webhook", s.getAccountWebhook)
	s.managed("PUT "+base+"/account-webhook", s.putAccountWebhook)
	s.managed("GET "+base+"/alerts", s.getAlerts)
	s.managed("PUT "+base+"/alerts", s.putAlerts)
}

type accountWebhookBody struct {
	URL string `json:"url"`
}

func (s *Server) getAccountWebhook(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	url, err := s.cfg.Manage.AccountWebhook(r.Context(), a, acct(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, accountWebhookBody{URL: url})
	return nil
}

func (s *Server) putAccountWebhook(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	var req struct {
		URL *string `json:"url"`
	}
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	if req.URL == nil {
		return fieldError("url", `is required: an https URL, or "" to remove the webhook`)
	}
	url, err := s.cfg.Manage.SetAccountWebhook(r.Context(), a, acct(r), *req.URL)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, accountWebhookBody{URL: url})
	return nil
}

// alertsBody is the alert thresholds in credits; null is off.
type alertsBody struct {
	LowBalance *float64 `json:"lowBalance"`
	DailySpend *float64 `json:"dailySpend"`
}

func (s *Server) getAlerts(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	al, err := s.cfg.Manage.AlertSettings(r.Context(), a, acct(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, alertsBody(al))
	return nil
}

func (s *Server) putAlerts(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	var req alertsBody
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	al, err := s.cfg.Manage.SetAlertSettings(r.Context(), a, acct(r), manage.Alerts(req))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, alertsBody(al))
	return nil
}
