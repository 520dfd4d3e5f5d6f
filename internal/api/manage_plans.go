package api

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/msgsvc/msgsvc/internal/api/view"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/manage"
)

// PlanAdmin is the operators' price plans and what an account pays
// (section 14).
type PlanAdmin interface {
	PricePlans(ctx context.Context, a manage.Actor) ([]domain.PricePlan, error)
	CreatePricePlan(ctx context.Context, a manage.Actor, in manage.PlanInput) (domain.PricePlan, error)
	UpdatePricePlan(ctx context.Context, a manage.Actor, planID string, in manage.PlanInput) (domain.PricePlan, error)
	SetAccountPlan(ctx context.Context, a manage.Actor, accountID, planID string) (domain.Account, error)
	Prices(ctx context.Context, a manage.Actor, accountID string) (manage.PriceView, error)
}

func (s *Server) managePlanRoutes(base string) {
	s.managed("GET "+base+"/price-plans", s.listPricePlans)
	s.managed("POST "+base+"/price-plans", s.createPricePlan)
	s.managed("PUT "+base+"/price-plans/{id}", s.updatePricePlan)
	s.managed("PUT "+base+"/accounts/{id}/price-plan", s.setAccountPlan)
	s.managed("GET "+base+"/prices", s.accountPrices)
}

type pricePlanView struct {
	ID        string         `json:"id"`
	Name      string         `json:"name"`
	Prices    map[string]any `json:"prices"`
	Default   bool           `json:"default"`
	Accounts  int            `json:"accounts"`
	CreatedAt view.Time      `json:"createdAt"`
	UpdatedAt view.Time      `json:"updatedAt"`
}

func toPricePlanView(p domain.PricePlan) pricePlanView {
	sheet, _ := domain.ParseSheet(p.Prices)
	return pricePlanView{ID: p.ID, Name: p.Name, Prices: ledger.SheetJSON(sheet), Default: p.Default, Accounts: p.Accounts,
		CreatedAt: view.Time(p.CreatedAt), UpdatedAt: view.Time(p.UpdatedAt)}
}

func (s *Server) listPricePlans(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	list, err := s.cfg.Manage.PricePlans(r.Context(), a)
	return writeList(w, "plans", list, err, toPricePlanView)
}

// planRequest is the body of a plan's POST and PUT; a field left out of a
// PUT stays as it is.
type planRequest struct {
	Name    *string         `json:"name"`
	Prices  json.RawMessage `json:"prices"`
	Default *bool           `json:"default"`
}

func (q planRequest) input() manage.PlanInput {
	if string(q.Prices) == "null" {
		q.Prices = nil
	}
	return manage.PlanInput{Name: q.Name, Prices: q.Prices, Default: q.Default}
}

func (s *Server) createPricePlan(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	var req planRequest
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	p, err := s.cfg.Manage.CreatePricePlan(r.Context(), a, req.input())
	return answer(w, http.StatusCreated, p, err, toPricePlanView)
}

func (s *Server) updatePricePlan(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	var req planRequest
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	p, err := s.cfg.Manage.UpdatePricePlan(r.Context(), a, r.PathValue("id"), req.input())
	return answer(w, http.StatusOK, p, err, toPricePlanView)
}

func (s *Server) setAccountPlan(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	var req struct {
		PlanID *string `json:"planId"`
	}
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	if req.PlanID == nil {
		return fieldError("planId", `is required: the plan's id, or "" to take the account off its plan`)
	}
	ac, err := s.cfg.Manage.SetAccountPlan(r.Context(), a, r.PathValue("id"), *req.PlanID)
	return answer(w, http.StatusOK, ac, err, toAccountView)
}

type planRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

type pricesView struct {
	AccountID string         `json:"accountId"`
	Currency  string         `json:"currency"`
	Country   string         `json:"country"`
	Plan      *planRef       `json:"plan"`
	Prices    map[string]any `json:"prices"`
	Overrides map[string]any `json:"overrides"`
}

func toPricesView(v manage.PriceView) pricesView {
	out := pricesView{AccountID: v.Account.ID, Currency: v.Account.Currency, Country: v.Account.CountryCode,
		Prices: ledger.PriceTableJSON(v.Prices), Overrides: ledger.SheetJSON(v.Overrides)}
	if v.Plan != nil {
		out.Plan = &planRef{ID: v.Plan.ID, Name: v.Plan.Name}
	}
	return out
}

func (s *Server) accountPrices(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	v, err := s.cfg.Manage.Prices(r.Context(), a, acct(r))
	return answer(w, http.StatusOK, v, err, toPricesView)
}
