package panel

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/manage"
	"github.com/msgsvc/msgsvc/internal/user"
)

// Balance, and the operators' page.

type balanceData struct {
	Balance manage.BalanceView
	Chart   chart
	Env     domain.Environment
	// OlderLink pages the ledger ("" on its last page).
	OlderLink string
}

func (p *Panel) balancePage(w http.ResponseWriter, r *http.Request, s *session) {
	if !p.needAccount(w, r, s) {
		return
	}
	env := shownEnv(r)
	b, err := p.cfg.Manage.Balance(r.Context(), s.Actor, s.Account, r.URL.Query().Get("before"), env)
	if p.failed(w, r, s, err) {
		return
	}
	d := balanceData{Balance: b, Chart: usageChart(b.Usage, b.Since, manage.UsageDays), Env: env}
	if b.NextBefore != "" {
		d.OlderLink = s.link("/balance?environment=" + string(env) + "&before=" + b.NextBefore)
	}
	p.render(w, r, http.StatusOK, "balance", &view{Title: "Balance", Nav: "balance", S: s, Data: d})
}

type operatorData struct {
	Overview manage.OperatorOverview
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
