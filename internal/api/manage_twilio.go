package api

import (
	"context"
	"net/http"

	"github.com/msgsvc/msgsvc/internal/api/view"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/manage"
)

// TwilioAdmin manages the logins of an account's Twilio-compatible
// clients: account SIDs with their auth tokens, and API keys.
type TwilioAdmin interface {
	TwilioCredentials(ctx context.Context, a manage.Actor, accountID string) ([]domain.TwilioCredential, error)
	TwilioCredential(ctx context.Context, a manage.Actor, accountID, sid string) (domain.TwilioCredential, error)
	CreateTwilioCredential(ctx context.Context, a manage.Actor, accountID string, in manage.NewTwilioCredential) (domain.TwilioCredential, error)
	RemoveTwilioCredential(ctx context.Context, a manage.Actor, accountID, sid string) error
}

func (s *Server) manageTwilioRoutes(base string) {
	s.managed("GET "+base+"/twilio-credentials", s.listTwilioCredentials)
	s.managed("POST "+base+"/twilio-credentials", s.createTwilioCredential)
	s.managed("GET "+base+"/twilio-credentials/{accountSid}", s.getTwilioCredential)
	s.managed("DELETE "+base+"/twilio-credentials/{accountSid}", s.removeTwilioCredential)
}

// The wire's names of the two kinds.
const (
	twilioKindAccount = "accountSid"
	twilioKindKey     = "apiKey"
)

// twilioCredentialView is a credential as lists show it, never with its
// secret. AccountSid is the account SID it is (AC…) or acts for (SK…).
type twilioCredentialView struct {
	Sid         string    `json:"sid"`
	Kind        string    `json:"kind"`
	AccountSid  string    `json:"accountSid"`
	Environment string    `json:"environment"`
	Name        string    `json:"name"`
	CreatedAt   view.Time `json:"createdAt"`
}

func twilioView(c domain.TwilioCredential) twilioCredentialView {
	v := twilioCredentialView{Sid: c.Sid, Kind: twilioKindAccount, AccountSid: c.Sid, Environment: string(c.Env), Name: c.Name,
		CreatedAt: view.Time(c.CreatedAt)}
	if c.Kind == domain.TwilioAPIKey {
		v.Kind, v.AccountSid = twilioKindKey, c.Parent
	}
	return v
}

// newAccountSidView is a new account SID, its token shown this once: the
// two halves of the Basic login Twilio's SDKs take.
type newAccountSidView struct {
	AccountSid  string    `json:"accountSid"`
	AuthToken   string    `json:"authToken"`
	Environment string    `json:"environment"`
	Name        string    `json:"name,omitempty"`
	CreatedAt   view.Time `json:"createdAt"`
}

// newAPIKeyView is a new API key, its secret shown this once, with the
// account SID that goes in the requests' paths.
type newAPIKeyView struct {
	Sid         string    `json:"sid"`
	Secret      string    `json:"secret"`
	AccountSid  string    `json:"accountSid"`
	Environment string    `json:"environment"`
	Name        string    `json:"name,omitempty"`
	CreatedAt   view.Time `json:"createdAt"`
}

func (s *Server) listTwilioCredentials(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	list, err := s.cfg.Manage.TwilioCredentials(r.Context(), a, acct(r))
	if err != nil {
		return err
	}
	out := []twilioCredentialView{}
	for _, c := range list {
		out = append(out, twilioView(c))
	}
	writeJSON(w, http.StatusOK, map[string]any{"twilioCredentials": out})
	return nil
}

func (s *Server) getTwilioCredential(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	c, err := s.cfg.Manage.TwilioCredential(r.Context(), a, acct(r), r.PathValue("accountSid"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, twilioView(c))
	return nil
}

func (s *Server) createTwilioCredential(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	var req struct {
		Environment string `json:"environment"`
		Kind        string `json:"kind"`
		AccountSid  string `json:"accountSid"`
		Name        string `json:"name"`
	}
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	if req.Kind != "" && req.Kind != twilioKindAccount && req.Kind != twilioKindKey {
		return fieldError("kind", "must be accountSid or apiKey")
	}
	c, err := s.cfg.Manage.CreateTwilioCredential(r.Context(), a, acct(r), manage.NewTwilioCredential{
		Environment: req.Environment, APIKey: req.Kind == twilioKindKey, AccountSid: req.AccountSid, Name: req.Name})
	if err != nil {
		return err
	}
	if c.Kind == domain.TwilioAPIKey {
		writeJSON(w, http.StatusCreated, newAPIKeyView{Sid: c.Sid, Secret: c.Secret, AccountSid: c.Parent,
			Environment: string(c.Env), Name: c.Name, CreatedAt: view.Time(c.CreatedAt)})
		return nil
	}
	writeJSON(w, http.StatusCreated, newAccountSidView{AccountSid: c.Sid, AuthToken: c.Secret, Environment: string(c.Env),
		Name: c.Name, CreatedAt: view.Time(c.CreatedAt)})
	return nil
}

func (s *Server) removeTwilioCredential(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	if err := s.cfg.Manage.RemoveTwilioCredential(r.Context(), a, acct(r), r.PathValue("accountSid")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
