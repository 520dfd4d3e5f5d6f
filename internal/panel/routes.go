package panel

import (
	"errors"
	"net/http"
	"strconv"
	"time"

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
	// Daily is the margin per day over the same 30 days.
	Daily chart
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
	daily, err := p.cfg.Manage.Margins(r.Context(), s.Actor, manage.MarginQuery{GroupBy: "day"})
	if p.failed(w, r, s, err) {
		return
	}
	d := routesData{Routes: routes, Currency: currency, Accounts: accts, Margins: report.Rows,
		Daily: marginChart(daily, p.cfg.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -(manage.UsageDays-1)), manage.UsageDays)}
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

// marginChart is the margin per day (price less cost; below the axis
// when a day sold under cost) as bars, and the price as a line, over days
// days from since.
func marginChart(rep manage.MarginReport, since time.Time, days int) chart {
	margin, price := make([]float64, days), make([]float64, days)
	var sumPrice, sumCost int64
	for _, row := range rep.Rows {
		day, err := time.Parse(time.DateOnly, row.Key)
		if err != nil {
			continue
		}
		if i := dayIndex(day, since, days); i >= 0 {
			margin[i] += float64(row.Price - row.Cost)
			price[i] += float64(row.Price)
			sumPrice += row.Price
			sumCost += row.Cost
		}
	}
	summary := creditsOf(float64(sumPrice-sumCost)) + " " + rep.Currency + " margin on " + creditsOf(float64(sumPrice)) + " sold in the last " +
		strconv.Itoa(days) + " days"
	if sumPrice > 0 {
		summary += " (" + strconv.FormatFloat(float64(sumPrice-sumCost)*100/float64(sumPrice), 'f', 1, 64) + " %)"
	}
	c := drawChart(chartSpec{ID: "margins", Title: "Margin per day: " + summary, Slots: chartDays(since, days),
		Series: []chartInput{{Name: "margin", Class: "margin", Values: margin}, {Name: "sold", Class: "revenue", Values: price, Line: true}},
		Format: creditsOf, Unit: rep.Currency})
	c.Summary = summary
	return c
}
