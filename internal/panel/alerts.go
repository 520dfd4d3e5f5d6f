package panel

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/msgsvc/msgsvc/internal/manage"
)

// Settings → Alerts: the account webhook, the thresholds, and the alerts
// posted (with redelivery).

type alertsData struct {
	URL    string
	Alerts manage.Alerts
	Events []manage.EventAttempts
}

func (p *Panel) alertsPage(w http.ResponseWriter, r *http.Request, s *session) {
	p.showAlerts(w, r, s, http.StatusOK, &view{Notice: notice(r)})
}

func (p *Panel) showAlerts(w http.ResponseWriter, r *http.Request, s *session, status int, v *view) {
	if !p.needAccount(w, r, s) {
		return
	}
	var d alertsData
	var err error
	if d.URL, err = p.cfg.Manage.AccountWebhook(r.Context(), s.Actor, s.Account); err == nil {
		d.Alerts, err = p.cfg.Manage.AlertSettings(r.Context(), s.Actor, s.Account)
	}
	if err == nil {
		d.Events, err = p.cfg.Manage.AlertEvents(r.Context(), s.Actor, s.Account)
	}
	if p.failed(w, r, s, err) {
		return
	}
	if v.Form == nil {
		v.Form = map[string]string{"url": d.URL, "lowBalance": creditsText(d.Alerts.LowBalance),
			"dailySpend": creditsText(d.Alerts.DailySpend)}
	}
	v.Title, v.Nav, v.S, v.Data = "Alerts", "alerts", s, d
	p.render(w, r, status, "alerts", v)
}

func creditsText(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'f', -1, 64)
}

// setAlerts saves the webhook and both thresholds; an empty box turns a
// threshold off (or removes the webhook).
func (p *Panel) setAlerts(w http.ResponseWriter, r *http.Request, s *session) {
	form := map[string]string{}
	for _, k := range []string{"url", "lowBalance", "dailySpend"} {
		form[k] = strings.TrimSpace(r.PostForm.Get(k))
	}
	errs := map[string]string{}
	var in manage.Alerts
	for _, f := range []struct {
		name string
		dst  **float64
	}{{"lowBalance", &in.LowBalance}, {"dailySpend", &in.DailySpend}} {
		if form[f.name] == "" {
			continue
		}
		v, err := strconv.ParseFloat(form[f.name], 64)
		if err != nil {
			errs[f.name] = "must be a number of credits, or empty for no alert"
			continue
		}
		*f.dst = &v
	}
	var err error
	if len(errs) == 0 {
		_, err = p.cfg.Manage.SetAlertsAndWebhook(r.Context(), s.Actor, s.Account, form["url"], in)
		if fe, ok := fieldErrors(err, nil); ok {
			errs = fe
		}
	}
	if len(errs) > 0 {
		p.showAlerts(w, r, s, http.StatusBadRequest, &view{Errors: errs, Form: form})
		return
	}
	p.finish(w, r, s, err, s.link("/settings/alerts?done=alerts"))
}

func (p *Panel) redeliverAlert(w http.ResponseWriter, r *http.Request, s *session) {
	if err := p.cfg.Manage.Redeliver(r.Context(), s.Actor, s.Account, r.PathValue("id")); err != nil {
		if errs, ok := fieldErrors(err, nil); ok {
			p.fail(w, r, http.StatusBadRequest, "The alert cannot be redelivered", errs["id"])
			return
		}
		p.actionError(w, r, s, err)
		return
	}
	http.Redirect(w, r, s.link("/settings/alerts?done=redeliver"), http.StatusSeeOther)
}
