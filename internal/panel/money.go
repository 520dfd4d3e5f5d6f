package panel

import (
	"cmp"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/manage"
	"github.com/msgsvc/msgsvc/internal/user"
)

// Balance, and the operators' page.

type balanceData struct {
	Balance manage.BalanceView
	// Credits is the credits charged per day; Chart the messages per
	// channel per day.
	Credits, Chart chart
	Env            domain.Environment
	// Chosen: the page picked test (no ?environment=) as live has had no
	// traffic in the chart's days.
	Chosen bool
	// OlderLink pages the ledger ("" on its last page).
	OlderLink string
}

func (p *Panel) balancePage(w http.ResponseWriter, r *http.Request, s *session) {
	if !p.needAccount(w, r, s) {
		return
	}
	env, asked := shownEnv(r), r.URL.Query().Has("environment")
	b, err := p.cfg.Manage.Balance(r.Context(), s.Actor, s.Account, r.URL.Query().Get("before"), env)
	if p.failed(w, r, s, err) {
		return
	}
	chosen := false
	if !asked && len(b.Usage) == 0 {
		t, err := p.cfg.Manage.Balance(r.Context(), s.Actor, s.Account, r.URL.Query().Get("before"), domain.Test)
		if p.failed(w, r, s, err) {
			return
		}
		if len(t.Usage) > 0 {
			b, env, chosen = t, domain.Test, true
		}
	}
	d := balanceData{Balance: b, Chart: usageChart(b.Usage, b.Since, manage.UsageDays), Env: env, Chosen: chosen,
		Credits: creditsChart("credits", b.Usage, b.Since, manage.UsageDays)}
	if !env.Live() {
		d.Credits.Summary = "Test messages are never charged: " + d.Chart.Summary + ", 0 credits"
	}
	if b.NextBefore != "" {
		d.OlderLink = s.link("/balance?environment=" + string(env) + "&before=" + b.NextBefore)
	}
	p.render(w, r, http.StatusOK, "balance", &view{Title: "Balance", Nav: "balance", S: s, Data: d})
}

type operatorData struct {
	Overview manage.OperatorOverview
	// Traffic is the live messages per day across accounts.
	Traffic  chart
	Pending  []pendingRow
	Senders  []pendingSender
	Accounts []domain.Account
	Tiers    []string
}

type pendingRow struct {
	domain.LimitRequest
	Account domain.Account
}

func (p *Panel) operatorPage(w http.ResponseWriter, r *http.Request, s *session) {
	p.showOperator(w, r, s, http.StatusOK, &view{Notice: notice(r)})
}

func (p *Panel) showOperator(w http.ResponseWriter, r *http.Request, s *session, status int, v *view) {
	if !s.Actor.Can(user.Operator) {
		p.actionError(w, r, s, manage.ErrForbidden)
		return
	}
	accts, err := p.cfg.Manage.Accounts(r.Context(), s.Actor)
	if p.failed(w, r, s, err) {
		return
	}
	pending, err := p.cfg.Manage.LimitRequests(r.Context(), s.Actor, "")
	if p.failed(w, r, s, err) {
		return
	}
	byID := map[string]domain.Account{}
	for _, a := range accts {
		byID[a.ID] = a
	}
	d := operatorData{Accounts: accts, Tiers: manage.Tiers}
	for _, lr := range pending {
		d.Pending = append(d.Pending, pendingRow{LimitRequest: lr, Account: byID[lr.AccountID]})
	}
	if d.Overview, err = p.cfg.Manage.OperatorOverview(r.Context(), s.Actor, accts); err != nil {
		p.actionError(w, r, s, err)
		return
	}
	d.Traffic = trafficChart(d.Overview, byID)
	if d.Senders, err = p.pendingSenders(r, s, byID); err != nil {
		p.actionError(w, r, s, err)
		return
	}
	// The operator page is about every account, whichever one is open.
	s.Account, s.Current = "", nil
	v.Title, v.Nav, v.S, v.Data = "Operator", "operator", s, d
	p.render(w, r, status, "operator", v)
}

// optInt reads an optional whole number from a form: nil when empty.
func optInt(v string) (*int, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil, true
	}
	n, err := strconv.Atoi(v)
	return &n, err == nil
}

func (p *Panel) approve(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	g := manage.Grant{Tier: r.PostForm.Get("tier")}
	errs := map[string]string{}
	for _, f := range []struct {
		name string
		dst  **int
	}{{"tierRpm", &g.TierRPM}, {"sendRpm", &g.SendRPM}, {"statusRpm", &g.StatusRPM}, {"mediaRpm", &g.MediaRPM}} {
		n, ok := optInt(r.PostForm.Get(f.name))
		if !ok {
			errs[id+"."+f.name] = "must be a whole number"
		}
		*f.dst = n
	}
	var err error
	if len(errs) == 0 {
		_, err = p.cfg.Manage.ApproveLimitRequest(r.Context(), s.Actor, id, g)
		if fe, ok := fieldErrors(err, map[string]string{"limits.tierRpm": "tierRpm", "limits.sendRpm": "sendRpm",
			"limits.statusRpm": "statusRpm", "limits.mediaRpm": "mediaRpm"}); ok {
			for k, m := range fe {
				errs[id+"."+k] = m
			}
		}
	}
	if len(errs) > 0 {
		p.showOperator(w, r, s, http.StatusBadRequest, &view{Errors: errs})
		return
	}
	p.finish(w, r, s, err, "/operator?done=approved")
}

func (p *Panel) reject(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	_, err := p.cfg.Manage.RejectLimitRequest(r.Context(), s.Actor, id, r.PostForm.Get("reason"))
	p.rejected(w, r, s, id, err, "rejected")
}

// rejected ends an operator's rejection of the request id: a refusal shows
// the operators' page again with its message at the request's reason.
func (p *Panel) rejected(w http.ResponseWriter, r *http.Request, s *session, id string, err error, done string) {
	if fe, ok := fieldErrors(err, nil); ok {
		p.showOperator(w, r, s, http.StatusBadRequest, &view{Errors: map[string]string{id + ".reason": fe["reason"] + fe["id"]}})
		return
	}
	p.finish(w, r, s, err, "/operator?done="+done)
}

func (p *Panel) topUp(w http.ResponseWriter, r *http.Request, s *session) {
	acct := r.PostForm.Get("account")
	amount, perr := strconv.ParseFloat(strings.TrimSpace(r.PostForm.Get("amount")), 64)
	var err error
	if perr == nil {
		_, err = p.cfg.Manage.TopUp(r.Context(), s.Actor, acct, amount, r.PostForm.Get("note"))
	}
	fe, invalid := fieldErrors(err, nil)
	if perr != nil {
		fe, invalid = map[string]string{"amount": "must be a number of credits"}, true
	}
	if invalid {
		errs := map[string]string{}
		for k, m := range fe {
			errs[acct+"."+k] = m
		}
		p.showOperator(w, r, s, http.StatusBadRequest, &view{Errors: errs})
		return
	}
	p.finish(w, r, s, err, "/operator?done=topup")
}

// trafficSeries is how many accounts the traffic chart shows on their own;
// the others are summed.
const trafficSeries = 5

// trafficChart is the live messages per day across accounts, stacked: the
// accounts that sent the most on their own, the others as one.
func trafficChart(o manage.OperatorOverview, byID map[string]domain.Account) chart {
	days := manage.UsageDays
	totals := map[string]int64{}
	var sum int64
	for _, t := range o.Traffic {
		totals[t.AccountID] += t.Messages
		sum += t.Messages
	}
	ids := make([]string, 0, len(totals))
	for id := range totals {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int { return cmp.Or(cmp.Compare(totals[b], totals[a]), strings.Compare(a, b)) })
	series := []chartInput{}
	slot := map[string]int{}
	for i, id := range ids {
		if i == trafficSeries {
			break
		}
		name := byID[id].Name
		if name == "" {
			name = id
		}
		slot[id] = len(series)
		series = append(series, chartInput{Name: name, Class: "s" + strconv.Itoa(i+1), Values: make([]float64, days)})
	}
	if len(ids) > trafficSeries {
		series = append(series, chartInput{Name: "Other accounts", Class: "other", Values: make([]float64, days)})
	}
	for _, t := range o.Traffic {
		i := dayIndex(domain.DayTime(t.Day), o.Since, days)
		if i < 0 {
			continue
		}
		k, ok := slot[t.AccountID]
		if !ok {
			k = len(series) - 1
		}
		series[k].Values[i] += float64(t.Messages)
	}
	summary := thousands(sum) + " live messages from " + strconv.Itoa(len(ids)) + " accounts in the last " + strconv.Itoa(days) + " days"
	c := drawChart(chartSpec{ID: "traffic", Title: "Live messages per day across accounts: " + summary, Slots: chartDays(o.Since, days),
		Series: series, Format: wholeOf, Whole: true})
	c.Summary = summary
	return c
}
