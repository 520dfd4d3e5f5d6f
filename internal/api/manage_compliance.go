package api

import (
	"context"
	"net/http"

	"github.com/msgsvc/msgsvc/internal/api/view"
	"github.com/msgsvc/msgsvc/internal/compliance"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/manage"
)

// ComplianceAdmin manages an account's opt-outs and compliance settings.
type ComplianceAdmin interface {
	OptOuts(ctx context.Context, a manage.Actor, accountID, env, cursor string, limit int) (compliance.Page, error)
	AddOptOut(ctx context.Context, a manage.Actor, accountID, env, phone string) (domain.OptOut, bool, error)
	RemoveOptOut(ctx context.Context, a manage.Actor, accountID, env, phone string) error
	Compliance(ctx context.Context, a manage.Actor, accountID string) (domain.Compliance, error)
	SetCompliance(ctx context.Context, a manage.Actor, accountID string, c domain.Compliance) (domain.Compliance, error)
}

// The management API's compliance operations: the
// opt-out list of either environment and the account's settings.

func (s *Server) manageComplianceRoutes(base string) {
	s.managed("GET "+base+"/opt-outs", s.manageOptOuts)
	s.managed("POST "+base+"/opt-outs", s.addOptOut)
	s.managed("DELETE "+base+"/opt-outs/{phone}", s.removeOptOut)
	s.managed("GET "+base+"/compliance", s.getCompliance)
	s.managed("PUT "+base+"/compliance", s.putCompliance)
}

type manageOptOutView struct {
	Phone       string             `json:"phone"`
	Environment domain.Environment `json:"environment"`
	Channel     *domain.Channel    `json:"channel"` // null when a person added it
	Source      string             `json:"source"`  // reply, account or operator
	CreatedAt   view.Time          `json:"createdAt"`
}

func ofOptOut(o domain.OptOut) manageOptOutView {
	v := manageOptOutView{Phone: o.Phone, Environment: o.Env, Source: o.Source, CreatedAt: view.Time(o.CreatedAt)}
	if o.Channel != "" {
		ch := o.Channel
		v.Channel = &ch
	}
	return v
}

func (s *Server) manageOptOuts(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	q := r.URL.Query()
	limit, err := limitParam(q)
	if err != nil {
		return fieldError("limit", "must be a whole number from 1 to 1000")
	}
	p, err := s.cfg.Manage.OptOuts(r.Context(), a, acct(r), q.Get("environment"), q.Get("cursor"), limit)
	if err != nil {
		return err
	}
	out := make([]manageOptOutView, len(p.OptOuts))
	for i, o := range p.OptOuts {
		out[i] = ofOptOut(o)
	}
	writeJSON(w, http.StatusOK, map[string]any{"optOuts": out, "nextCursor": view.StrOrNil(p.Next)})
	return nil
}

func (s *Server) addOptOut(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	var req struct {
		Phone       string `json:"phone"`
		Environment string `json:"environment"`
	}
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	o, added, err := s.cfg.Manage.AddOptOut(r.Context(), a, acct(r), req.Environment, req.Phone)
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if !added {
		status = http.StatusOK
	}
	writeJSON(w, status, ofOptOut(o))
	return nil
}

func (s *Server) removeOptOut(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	return noContent(w, s.cfg.Manage.RemoveOptOut(r.Context(), a, acct(r), r.URL.Query().Get("environment"), r.PathValue("phone")))
}

type complianceView struct {
	QuietHours    *string `json:"quietHours"`
	RetentionDays int     `json:"retentionDays"`
	OptOutReply   *string `json:"optOutReply"`
	OptInReply    *string `json:"optInReply"`
}

func ofCompliance(c domain.Compliance) complianceView {
	return complianceView{QuietHours: view.StrOrNil(c.QuietHours), RetentionDays: c.RetentionDays,
		OptOutReply: view.StrOrNil(c.OptOutReply), OptInReply: view.StrOrNil(c.OptInReply)}
}

func (s *Server) getCompliance(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	c, err := s.cfg.Manage.Compliance(r.Context(), a, acct(r))
	return answer(w, http.StatusOK, c, err, ofCompliance)
}

// putCompliance changes the settings it names; a field left out (or null)
// keeps its value, "" (0 for retentionDays) turns the setting off.
func (s *Server) putCompliance(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	var req struct {
		QuietHours    *string `json:"quietHours"`
		RetentionDays *int    `json:"retentionDays"`
		OptOutReply   *string `json:"optOutReply"`
		OptInReply    *string `json:"optInReply"`
	}
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	c, err := s.cfg.Manage.Compliance(r.Context(), a, acct(r))
	if err != nil {
		return err
	}
	set(&c.QuietHours, req.QuietHours)
	set(&c.RetentionDays, req.RetentionDays)
	set(&c.OptOutReply, req.OptOutReply)
	set(&c.OptInReply, req.OptInReply)
	c, err = s.cfg.Manage.SetCompliance(r.Context(), a, acct(r), c)
	return answer(w, http.StatusOK, c, err, ofCompliance)
}

// set stores v in dst when the request gave it.
func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}
