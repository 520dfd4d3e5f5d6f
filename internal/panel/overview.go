package panel

import (
	"net/http"
	"strconv"

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
	// Trend and Credits are messages and credits per day over the last
	// 30 days.
	Trend, Credits chart
	// Chosen: the page picked the environment (no ?environment=),
	// test because live has had no traffic in those days.
	Chosen bool
}

// home shows the account's overview; an operator who has not opened an
// account goes to the operator page.
func (p *Panel) home(w http.ResponseWriter, r *http.Request, s *session) {
	if !p.needAccount(w, r, s) {
		return
	}
	env, asked := shownEnv(r), r.URL.Query().Has("environment")
	o, err := p.cfg.Manage.Overview(r.Context(), s.Actor, s.Account, env)
	if p.failed(w, r, s, err) {
		return
	}
	chosen := false
	if !asked && o.Recent.Total.Messages == 0 {
		// A newcomer's first sends are with a test key: open on them
		// rather than on an empty live page.
		t, err := p.cfg.Manage.Overview(r.Context(), s.Actor, s.Account, domain.Test)
		if p.failed(w, r, s, err) {
			return
		}
		if t.Recent.Total.Messages > 0 {
			o, chosen = t, true
		}
	}
	d := overviewData{Overview: o, Statuses: domain.Statuses, Chosen: chosen, Trend: trendChart(o), Credits: trendCredits(o)}
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

// trendChart is the overview's 30 days: messages per day as bars, the
// credits charged as a line (on its own chart, as the two have different
// units, the line would flatten one of them).
func trendChart(o manage.Overview) chart {
	slots := make([]string, len(o.Days))
	msgs := make([]float64, len(o.Days))
	for i, d := range o.Days {
		slots[i] = d.Day.Format("Jan 2")
		msgs[i] = float64(d.Messages)
	}
	sum := thousands(o.Recent.Total.Messages) + " messages in the last " + strconv.Itoa(len(o.Days)) + " days"
	c := drawChart(chartSpec{ID: "trend-messages", Title: "Messages per day: " + sum, Slots: slots,
		Series: []chartInput{{Name: "messages", Class: "sms", Values: msgs}}, Format: wholeOf, Whole: true, Half: true})
	c.Summary = sum
	return c
}

// trendCredits is the overview's credits charged per day, as a line.
func trendCredits(o manage.Overview) chart {
	slots := make([]string, len(o.Days))
	credits := make([]float64, len(o.Days))
	for i, d := range o.Days {
		slots[i] = d.Day.Format("Jan 2")
		credits[i] = float64(d.Credits)
	}
	sum := creditsOf(float64(o.Recent.Total.Credits)) + " credits charged in the last " + strconv.Itoa(len(o.Days)) + " days"
	if !o.Env.Live() {
		sum = "Test messages are never charged"
	}
	c := drawChart(chartSpec{ID: "trend-credits", Title: "Credits charged per day: " + sum, Slots: slots,
		Series: []chartInput{{Name: "credits", Class: "credits", Values: credits, Line: true}}, Format: creditsOf, Half: true})
	c.Summary = sum
	return c
}
