package panel

import (
	"errors"
	"net/http"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/manage"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// Operator → Routes: the routes with their providers' state, the route
// simulator (a GET form: it changes nothing) and the last 30 days'
// margins by provider.

type routesData struct {
	Routes    []provider.RouteInfo
	Currency  string
	Accounts  []domain.Account
	Simulated *manage.Simulated
	Margins   []domain.MarginRow
}

func (p *Panel) routesPage(w http.ResponseWriter, r *http.Request, s *session) {
	routes, currency, err := p.cfg.Manage.Routes(s.Actor)
	if p.failed(w, r, s, err) {
		return
	}
	accts, err := p.cfg.Manage.Accounts(r.Context(), s.Actor)
	if p.failed(w, r, s, err) {
		return
	}
	report, err := p.cfg.Manage.Margins(r.Context(), s.Actor, manage.MarginQuery{GroupBy: "provider"})
	if p.failed(w, r, s, err) {
		return
	}
	d := routesData{Routes: routes, Currency: currency, Accounts: accts, Margins: report.Rows}
	q := r.URL.Query()
	v := &view{Form: map[string]string{"to": q.Get("to"), "type": q.Get("type"), "account": q.Get("account"), "from": q.Get("from")}}
	status := http.StatusOK
	if q.Has("to") {
		res, err := p.cfg.Manage.SimulateRoute(r.Context(), s.Actor, manage.Simulation{To: q.Get("to"), Type: q.Get("type"),
			Account: q.Get("account"), From: q.Get("from")})
		switch errs, invalid := fieldErrors(err, nil); {
		case err == nil:
			d.Simulated = &res
		case invalid:
			v.Errors, status = errs, http.StatusBadRequest
		case errors.Is(err, manage.ErrNotFound):
			v.Errors, status = map[string]string{"account": "no such account"}, http.StatusBadRequest
		default:
			p.actionError(w, r, s, err)
			return
		}
	}
	s.Account, s.Current = "", nil
	v.Title, v.Nav, v.S, v.Data = "Routes", "routes", s, d
	p.render(w, r, status, "routes", v)
}
