package api

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/msgsvc/msgsvc/internal/api/view"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/manage"
)

// FraudAdmin reads and sets the fraud guard's rules and works its held
// messages and decisions.
type FraudAdmin interface {
	FraudRules(ctx context.Context, a manage.Actor, accountID string, defaults bool) (domain.FraudRules, error)
	SetFraudRules(ctx context.Context, a manage.Actor, accountID string, defaults bool, in domain.FraudRules) (domain.FraudRules, error)
	HeldMessages(ctx context.Context, a manage.Actor, q manage.HeldQuery) (manage.HeldPage, error)
	ReleaseHeld(ctx context.Context, a manage.Actor, messageID string) (domain.Message, error)
	RejectHeld(ctx context.Context, a manage.Actor, messageID string) (domain.Message, error)
	FraudBlocks(ctx context.Context, a manage.Actor, q manage.FraudBlocksQuery) ([]domain.FraudHour, error)
}

// The management API's fraud guard (docs/fraud.md).

func (s *Server) manageFraudRoutes(base string) {
	s.managed("GET "+base+"/fraud", s.getFraud)
	s.managed("PUT "+base+"/fraud", s.putFraud)
	s.managed("GET "+base+"/fraud/held", s.heldMessages)
	s.managed("POST "+base+"/fraud/held/{id}/release", s.releaseHeld)
	s.managed("POST "+base+"/fraud/held/{id}/reject", s.rejectHeld)
	s.managed("GET "+base+"/fraud/blocks", s.fraudBlocks)
}

// fraudRulesBody is the rules as the API spells them: lists never null
// on output, except allowedCountries, whose null allows every country.
type fraudRulesBody struct {
	AllowedCountries   []string           `json:"allowedCountries"`
	PerRecipientHourly *int               `json:"perRecipientHourly"`
	PerRangeHourly     *int               `json:"perRangeHourly"`
	BurstFactor        *float64           `json:"burstFactor"`
	Action             domain.FraudAction `json:"action"`
	Trusted            []string           `json:"trusted"`
}

func fraudBody(r domain.FraudRules) fraudRulesBody {
	b := fraudRulesBody(r)
	b.Action = r.ActionOr()
	if b.Trusted == nil {
		b.Trusted = []string{}
	}
	return b
}

// fraudDefaults reads ?default=true (the operator's defaults).
func fraudDefaults(r *http.Request) (bool, error) {
	v := r.URL.Query().Get("default")
	if v == "" {
		return false, nil
	}
	d, err := strconv.ParseBool(v)
	if err != nil {
		return false, fieldError("default", "must be true or false")
	}
	return d, nil
}

func (s *Server) getFraud(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	dflt, err := fraudDefaults(r)
	if err != nil {
		return err
	}
	rules, err := s.cfg.Manage.FraudRules(r.Context(), a, acct(r), dflt)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, fraudBody(rules))
	return nil
}

func (s *Server) putFraud(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	dflt, err := fraudDefaults(r)
	if err != nil {
		return err
	}
	var req fraudRulesBody
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	rules, err := s.cfg.Manage.SetFraudRules(r.Context(), a, acct(r), dflt, domain.FraudRules(req))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, fraudBody(rules))
	return nil
}

// fraudView is a decision as operators read it.
type fraudView struct {
	Rule       string     `json:"rule"`
	Scope      string     `json:"scope"`
	Key        string     `json:"key"`
	Count      int64      `json:"count"`
	Cap        int64      `json:"cap"`
	Baseline   *float64   `json:"baseline"`
	Factor     *float64   `json:"factor"`
	Action     string     `json:"action"`
	At         view.Time  `json:"at"`
	Resolution *string    `json:"resolution"`
	ResolvedBy *string    `json:"resolvedBy"`
	ResolvedAt *view.Time `json:"resolvedAt"`
}

func toFraudView(d *domain.FraudDecision) *fraudView {
	if d == nil {
		return nil
	}
	v := &fraudView{Rule: d.Rule, Scope: d.Scope, Key: d.Key, Count: d.Count, Cap: d.Cap, Action: string(d.Action),
		At: view.Time(d.At), Resolution: view.StrOrNil(d.Resolution), ResolvedBy: view.StrOrNil(d.ResolvedBy)}
	if d.Rule == domain.RuleBurst {
		v.Baseline, v.Factor = &d.Baseline, &d.Factor
	}
	if !d.ResolvedAt.IsZero() {
		t := view.Time(d.ResolvedAt)
		v.ResolvedAt = &t
	}
	return v
}

// fraudOf is the decision on a message, shown to operators only.
type fraudOf struct {
	Fraud *fraudView `json:"fraud"`
}

func operatorFraud(a manage.Actor, m domain.Message) *fraudOf {
	if !a.Operator() {
		return nil
	}
	return &fraudOf{Fraud: toFraudView(m.Fraud)}
}

// heldItem is a held message: the status query's fields, its account and
// environment, and the decision.
type heldItem struct {
	view.Message
	AccountID   string             `json:"accountId"`
	Environment domain.Environment `json:"environment"`
	Fraud       *fraudView         `json:"fraud"`
}

func toHeldItem(m domain.Message) heldItem {
	return heldItem{Message: view.OfMessage(m), AccountID: m.AccountID, Environment: m.Env, Fraud: toFraudView(m.Fraud)}
}

func (s *Server) heldMessages(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	q := r.URL.Query()
	limit := 0
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fieldError("limit", "must be from 1 to 1000")
		}
		limit = n
	}
	page, err := s.cfg.Manage.HeldMessages(r.Context(), a, manage.HeldQuery{AccountID: acct(r), Limit: limit, Cursor: q.Get("cursor")})
	if err != nil {
		return err
	}
	out := make([]heldItem, 0, len(page.Messages))
	for _, m := range page.Messages {
		out = append(out, toHeldItem(m))
	}
	writeJSON(w, http.StatusOK, map[string]any{"messages": out, "nextCursor": view.StrOrNil(page.NextCursor)})
	return nil
}

func (s *Server) releaseHeld(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	m, err := s.cfg.Manage.ReleaseHeld(r.Context(), a, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toHeldItem(m))
	return nil
}

func (s *Server) rejectHeld(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	m, err := s.cfg.Manage.RejectHeld(r.Context(), a, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toHeldItem(m))
	return nil
}

// fraudHourView is one hour's decisions of a rule on a key of an account.
type fraudHourView struct {
	Hour      view.Time `json:"hour"`
	AccountID string    `json:"accountId"`
	Rule      string    `json:"rule"`
	Scope     string    `json:"scope"`
	Key       string    `json:"key"`
	Action    string    `json:"action"`
	Messages  int64     `json:"messages"`
}

func (s *Server) fraudBlocks(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	q := r.URL.Query()
	var bq manage.FraudBlocksQuery
	for _, f := range []struct {
		name string
		dst  *time.Time
	}{{"from", &bq.From}, {"to", &bq.To}} {
		v := q.Get(f.name)
		if v == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return fieldError(f.name, "must be an RFC 3339 time, such as 2026-11-28T10:00:00Z")
		}
		*f.dst = t
	}
	bq.AccountID = acct(r)
	hs, err := s.cfg.Manage.FraudBlocks(r.Context(), a, bq)
	if err != nil {
		return err
	}
	out := make([]fraudHourView, len(hs))
	for i, h := range hs {
		out[i] = fraudHourView{Hour: view.Time(h.Hour), AccountID: h.AccountID, Rule: h.Rule, Scope: h.Scope, Key: h.Key,
			Action: string(h.Action), Messages: h.Messages}
	}
	writeJSON(w, http.StatusOK, map[string]any{"hours": out})
	return nil
}
