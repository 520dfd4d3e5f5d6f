package panel

import (
	"net/http"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/manage"
)

// The overview: the page a user lands on.

type overviewData struct {
	manage.Overview
	Ratio, RecentRatio float64
	HasRatio           bool
	HasRecentRatio     bool
	// SpendMeter is the share of the daily alert spent today, in tens of
	// percent (a CSS width class), and Over whether it was reached.
	SpendMeter int
	Over       bool
	Statuses   []domain.Status
}

// home shows the account's overview; an operator who has not opened an
// account goes to the operator page.
func (p *Panel) home(w http.ResponseWriter, r *http.Request, s *session) {
	if !p.needAccount(w, r, s) {
		return
	}
	o, err := p.cfg.Manage.Overview(r.Context(), s.Actor, s.Account, shownEnv(r))
	if p.failed(w, r, s, err) {
		return
	}
	d := overviewData{Overview: o, Statuses: domain.Statuses}
	d.Ratio, d.HasRatio = o.Today.DeliveryRatio()
	d.RecentRatio, d.HasRecentRatio = o.Recent.DeliveryRatio()
	if t := o.Account.Alerts.DailySpend; t != nil {
		d.Over = o.SpendToday >= *t
		d.SpendMeter = 100
		if *t > 0 && !d.Over {
			d.SpendMeter = int(o.SpendToday*10 / *t) * 10
		}
	}
	p.render(w, r, http.StatusOK, "overview", &view{Title: "Overview", Nav: "overview", S: s, Data: d, Notice: notice(r)})
}
