package panel

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// The compliance page: the opt-out list of either
// environment, to read, add to and remove from, and the account's quiet
// hours, retention and confirmation replies.

// optOutsPerPage is how many opt-outs the page lists at once.
const optOutsPerPage = 50

type complianceData struct {
	Env      string // the environment whose list is shown
	OptOuts  []domain.OptOut
	Cursor   string // this page's cursor ("" for the first)
	Next     string // the next page's link ("" on the last)
	Settings domain.Compliance
}

func (p *Panel) compliancePage(w http.ResponseWriter, r *http.Request, s *session) {
	p.showCompliance(w, r, s, http.StatusOK, &view{Notice: notice(r)}, r.URL.Query().Get("environment"), r.URL.Query().Get("cursor"))
}

// showCompliance renders the page for one environment's list; an unknown
// environment shows live, an unknown cursor the first page.
func (p *Panel) showCompliance(w http.ResponseWriter, r *http.Request, s *session, status int, v *view, env, cursor string) {
	if !p.needAccount(w, r, s) {
		return
	}
	if env != string(domain.Test) {
		env = string(domain.Live)
	}
	page, err := p.cfg.Manage.OptOuts(r.Context(), s.Actor, s.Account, env, cursor, optOutsPerPage)
	if _, bad := fieldErrors(err, nil); bad && cursor != "" {
		cursor = ""
		page, err = p.cfg.Manage.OptOuts(r.Context(), s.Actor, s.Account, env, "", optOutsPerPage)
	}
	if p.failed(w, r, s, err) {
		return
	}
	settings, err := p.cfg.Manage.Compliance(r.Context(), s.Actor, s.Account)
	if p.failed(w, r, s, err) {
		return
	}
	d := complianceData{Env: env, OptOuts: page.OptOuts, Cursor: cursor, Settings: settings}
	if page.Next != "" {
		d.Next = s.link("/settings/compliance?environment=" + env + "&cursor=" + url.QueryEscape(page.Next))
	}
	v.Title, v.Nav, v.S, v.Data = "Compliance", "compliance", s, d
	p.render(w, r, status, "compliance", v)
}

func (p *Panel) addOptOut(w http.ResponseWriter, r *http.Request, s *session) {
	env, phone := r.PostForm.Get("environment"), strings.TrimSpace(r.PostForm.Get("phone"))
	_, added, err := p.cfg.Manage.AddOptOut(r.Context(), s.Actor, s.Account, env, phone)
	if errs, ok := fieldErrors(err, nil); ok {
		p.showCompliance(w, r, s, http.StatusBadRequest, &view{Errors: errs, Form: map[string]string{"phone": phone}}, env, "")
		return
	}
	if p.failed(w, r, s, err) {
		return
	}
	done := "optedOut"
	if !added {
		done = "alreadyOptedOut"
	}
	http.Redirect(w, r, s.link("/settings/compliance?environment="+url.QueryEscape(env)+"&done="+done), http.StatusSeeOther)
}

func (p *Panel) removeOptOut(w http.ResponseWriter, r *http.Request, s *session) {
	env := r.PostForm.Get("environment")
	p.finish(w, r, s, p.cfg.Manage.RemoveOptOut(r.Context(), s.Actor, s.Account, env, r.PathValue("phone")), s.link("/settings/compliance?environment="+url.QueryEscape(env)+"&done=optedIn"))
}

func (p *Panel) setCompliance(w http.ResponseWriter, r *http.Request, s *session) {
	form := map[string]string{"quietHours": r.PostForm.Get("quietHours"), "retentionDays": r.PostForm.Get("retentionDays"),
		"optOutReply": r.PostForm.Get("optOutReply"), "optInReply": r.PostForm.Get("optInReply")}
	days := 0
	if v := strings.TrimSpace(form["retentionDays"]); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			p.showCompliance(w, r, s, http.StatusBadRequest, &view{Form: form,
				Errors: map[string]string{"retentionDays": "must be a whole number of days (0 keeps data)"}}, "", "")
			return
		}
		days = n
	}
	_, err := p.cfg.Manage.SetCompliance(r.Context(), s.Actor, s.Account, domain.Compliance{QuietHours: form["quietHours"],
		RetentionDays: days, OptOutReply: form["optOutReply"], OptInReply: form["optInReply"]})
	if errs, ok := fieldErrors(err, nil); ok {
		p.showCompliance(w, r, s, http.StatusBadRequest, &view{Errors: errs, Form: form}, "", "")
		return
	}
	p.finish(w, r, s, err, s.link("/settings/compliance?done=compliance"))
}
