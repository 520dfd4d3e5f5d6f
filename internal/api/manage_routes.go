package api

import (
	"context"
	"net/http"

	"github.com/msgsvc/msgsvc/internal/api/view"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/manage"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// RouteAdmin shows operators the routes, simulates one and reports margins.
type RouteAdmin interface {
	Routes(a manage.Actor) ([]provider.RouteInfo, string, error)
	SimulateRoute(ctx context.Context, a manage.Actor, q manage.Simulation) (manage.Simulated, error)
	Margins(ctx context.Context, a manage.Actor, q manage.MarginQuery) (manage.MarginReport, error)
}

// Routes, the route simulator and the margins report: operators only.

func (s *Server) manageRouteRoutes(base string) {
	s.managed("GET "+base+"/routes", s.listRoutes)
	s.managed("POST "+base+"/routes/simulate", s.simulateRoute)
	s.managed("GET "+base+"/reports/margins", s.marginsReport)
}

// costOf is what a hand-over cost the operator, for operators' eyes only:
// nil pointers when the provider has no cost for the destination.
type costOf struct {
	Route    *string  `json:"route"`
	Cost     *float64 `json:"cost"`
	Currency *string  `json:"currency"`
}

func operatorCost(a manage.Actor, m domain.Message) *costOf {
	if !a.Operator() {
		return nil
	}
	c := &costOf{Route: view.StrOrNil(m.Route)}
	if m.CostCurrency != "" {
		v := ledger.Credits(m.Cost)
		c.Cost, c.Currency = &v, &m.CostCurrency
	}
	return c
}

type routeProviderView struct {
	Name           string   `json:"name"`
	Weight         *int     `json:"weight"`
	Circuit        string   `json:"circuit"`
	DeliveredRatio *float64 `json:"deliveredRatio"`
	CostPrefixes   int      `json:"costPrefixes"`
}

type routeView struct {
	Name      string              `json:"name"`
	Order     int                 `json:"order"`
	Channel   domain.Channel      `json:"channel"`
	Countries []string            `json:"countries"`
	Prefixes  []string            `json:"prefixes"`
	Accounts  []string            `json:"accounts"`
	Senders   []string            `json:"senders"`
	Hours     *string             `json:"hours"`
	Strategy  provider.Strategy   `json:"strategy"`
	Window    *int                `json:"window"`
	AllowLoss bool                `json:"allowLoss"`
	Providers []routeProviderView `json:"providers"`
}

func ratioOrNil(v float64, ok bool) *float64 {
	if !ok {
		return nil
	}
	return &v
}

func list(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (s *Server) listRoutes(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	routes, currency, err := s.cfg.Manage.Routes(a)
	if err != nil {
		return err
	}
	out := []routeView{}
	for _, rt := range routes {
		v := routeView{Name: rt.Name, Order: rt.Order, Channel: rt.Channel, Countries: list(rt.Countries), Prefixes: list(rt.Prefixes),
			Accounts: list(rt.Accounts), Senders: list(rt.Senders), Hours: view.StrOrNil(rt.Hours), Strategy: rt.Strategy,
			AllowLoss: rt.AllowLoss, Providers: []routeProviderView{}}
		if rt.Window > 0 {
			v.Window = &rt.Window
		}
		for _, p := range rt.Providers {
			pv := routeProviderView{Name: p.Name, Circuit: p.Circuit, DeliveredRatio: ratioOrNil(p.Ratio, p.RatioKnown),
				CostPrefixes: p.CostPrefixes}
			if rt.Strategy == provider.Weighted {
				pv.Weight = &p.Weight
			}
			v.Providers = append(v.Providers, pv)
		}
		out = append(out, v)
	}
	writeJSON(w, http.StatusOK, map[string]any{"routes": out, "currency": view.StrOrNil(currency)})
	return nil
}

type candidateView struct {
	Provider       string   `json:"provider"`
	Cost           *float64 `json:"cost"`
	Price          float64  `json:"price"`
	Margin         *float64 `json:"margin"`
	Circuit        string   `json:"circuit"`
	DeliveredRatio *float64 `json:"deliveredRatio"`
	Eligible       bool     `json:"eligible"`
	Reason         *string  `json:"reason"`
}

// SimulationView is the answer of the route simulator.
type SimulationView struct {
	Route      *string         `json:"route"`
	Strategy   *string         `json:"strategy"`
	Candidates []candidateView `json:"candidates"`
	Chosen     *string         `json:"chosen"`
	Price      float64         `json:"price"`
	Currency   *string         `json:"currency"`
}

func simulationView(res manage.Simulated) SimulationView {
	d := res.Decision
	out := SimulationView{Route: view.StrOrNil(d.Route), Strategy: view.StrOrNil(string(d.Strategy)), Candidates: []candidateView{},
		Price: ledger.Credits(res.Price), Currency: view.StrOrNil(d.Currency)}
	if d.Provider != nil {
		name := d.Provider.Name()
		out.Chosen = &name
	}
	for _, c := range d.Candidates {
		cv := candidateView{Provider: c.Provider, Price: ledger.Credits(c.Price), Circuit: c.Circuit,
			DeliveredRatio: ratioOrNil(c.Ratio, c.RatioKnown), Eligible: c.Eligible, Reason: view.StrOrNil(c.Reason)}
		if c.Costed {
			cost, margin := ledger.Credits(c.Cost), ledger.Credits(c.Price-c.Cost)
			cv.Cost, cv.Margin = &cost, &margin
		}
		out.Candidates = append(out.Candidates, cv)
	}
	return out
}

func (s *Server) simulateRoute(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	var req struct {
		To      string `json:"to"`
		Type    string `json:"type"`
		Account string `json:"account"`
		From    string `json:"from"`
	}
	if !a.Operator() {
		return manage.ErrForbidden
	}
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	res, err := s.cfg.Manage.SimulateRoute(r.Context(), a, manage.Simulation{To: req.To, Type: req.Type, Account: req.Account, From: req.From})
	return answer(w, http.StatusOK, res, err, simulationView)
}

type marginRowView struct {
	Key            string   `json:"key"`
	Messages       int64    `json:"messages"`
	Segments       int64    `json:"segments"`
	Price          float64  `json:"price"`
	Cost           float64  `json:"cost"`
	Margin         float64  `json:"margin"`
	DeliveredRatio *float64 `json:"deliveredRatio"`
}

func (s *Server) marginsReport(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	q := r.URL.Query()
	rep, err := s.cfg.Manage.Margins(r.Context(), a, manage.MarginQuery{From: q.Get("from"), To: q.Get("to"), GroupBy: q.Get("groupBy"), Account: acct(r)})
	if err != nil {
		return err
	}
	rows := []marginRowView{}
	for _, m := range rep.Rows {
		v := marginRowView{Key: m.Key, Messages: m.Messages, Segments: m.Segments, Price: ledger.Credits(m.Price),
			Cost: ledger.Credits(m.Cost), Margin: ledger.Credits(m.Price - m.Cost)}
		if m.Final > 0 {
			ratio := float64(m.Delivered) / float64(m.Final)
			v.DeliveredRatio = &ratio
		}
		rows = append(rows, v)
	}
	writeJSON(w, http.StatusOK, map[string]any{"rows": rows, "currency": view.StrOrNil(rep.Currency)})
	return nil
}
