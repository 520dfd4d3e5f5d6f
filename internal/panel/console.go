package panel

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/manage"
	"github.com/msgsvc/msgsvc/internal/phone"
	"github.com/msgsvc/msgsvc/internal/user"
)

// The operator's console for pricing: new accounts, price plans (with a
// warning where a plan sells below a rate card's cost), the providers'
// rate cards, margins, and each account's Prices page, which its users
// read and operators use to move it to another plan.

func (p *Panel) consoleRoutes() {
	p.handle("GET /operator/accounts/new", p.authed(p.newAccountPage))
	p.handle("POST /operator/accounts", p.form(p.createAccount))
	p.handle("GET /operator/plans", p.authed(p.plansPage))
	p.handle("POST /operator/plans", p.form(p.createPlan))
	p.handle("GET /operator/plans/{id}", p.authed(p.planPage))
	p.handle("POST /operator/plans/{id}", p.form(p.updatePlan))
	p.handle("GET /operator/rate-cards", p.authed(p.rateCardsPage))
	p.handle("GET /operator/margins", p.authed(p.marginsPage))
	p.handle("GET /prices", p.authed(p.pricesPage))
	p.handle("POST /prices/plan", p.form(p.setAccountPlan))
}

// consoleNotices confirm the console's actions (?done=).
var consoleNotices = map[string]string{
	"plan-created":    "Price plan created.",
	"plan-saved":      "Price plan saved: its accounts pay the new prices from their next send.",
	"plan-set":        "The account's price plan is changed: its next send pays it.",
	"account-created": "Account created. Top it up and give its owner a login (msgsvc user create) to get it sending.",
}

func consoleNotice(r *http.Request) string { return consoleNotices[r.URL.Query().Get("done")] }

// operatorOnly answers a page only operators may open.
func (p *Panel) operatorOnly(w http.ResponseWriter, r *http.Request, s *session) bool {
	if !s.Actor.Can(user.Operator) {
		p.actionError(w, r, s, manage.ErrForbidden)
		return false
	}
	s.Account, s.Current = "", nil
	return true
}

// New account.

type newAccountData struct {
	Plans    []domain.PricePlan
	Tiers    []string
	Parents  []domain.Account // resellers an account may be made under
	Currency string
}

func (p *Panel) newAccountPage(w http.ResponseWriter, r *http.Request, s *session) {
	p.showNewAccount(w, r, s, http.StatusOK, &view{Form: map[string]string{"country": "1", "currency": "USD", "tier": "free"}})
}

func (p *Panel) showNewAccount(w http.ResponseWriter, r *http.Request, s *session, status int, v *view) {
	if !p.operatorOnly(w, r, s) {
		return
	}
	plans, err := p.cfg.Manage.PricePlans(r.Context(), s.Actor)
	if p.failed(w, r, s, err) {
		return
	}
	accts, err := p.cfg.Manage.Accounts(r.Context(), s.Actor)
	if p.failed(w, r, s, err) {
		return
	}
	d := newAccountData{Plans: plans, Tiers: manage.Tiers}
	for _, a := range accts {
		if a.Reseller {
			d.Parents = append(d.Parents, a)
		}
	}
	if _, ok := v.Form["plan"]; !ok {
		for _, pl := range plans {
			if pl.Default {
				v.Form["plan"] = pl.ID
			}
		}
	}
	v.Title, v.Nav, v.S, v.Data = "New account", "operator", s, d
	p.render(w, r, status, "account_new", v)
}

func (p *Panel) createAccount(w http.ResponseWriter, r *http.Request, s *session) {
	f := r.PostForm
	in := manage.NewChild{Name: f.Get("name"), Country: strings.TrimPrefix(strings.TrimSpace(f.Get("country")), "+"),
		Currency: strings.TrimSpace(f.Get("currency")), Tier: f.Get("tier"), PricePlan: f.Get("plan"),
		Reseller: f.Get("reseller") == "on", ParentID: f.Get("parent")}
	if in.ParentID != "" {
		// A child takes its parent's currency and tier, and no plan.
		in.Currency, in.Tier, in.PricePlan = "", "", ""
	}
	a, err := p.cfg.Manage.CreateAccount(r.Context(), s.Actor, in)
	if errs, invalid := fieldErrors(err, nil); invalid {
		form := map[string]string{}
		for k := range f {
			form[k] = f.Get(k)
		}
		p.showNewAccount(w, r, s, http.StatusBadRequest, &view{Errors: errs, Form: form})
		return
	}
	p.finish(w, r, s, err, "/?account="+url.QueryEscape(a.ID)+"&done=account-created")
}

// Price plans.

// rateNames are the rates of a price table, in the order the forms show
// them, with their labels.
var rateNames = []struct{ Key, Label string }{{"smsSegment", "SMS segment"}, {"rcsMessage", "RCS message"},
	{"waConversation", "WhatsApp conversation"}, {"waInWindow", "WhatsApp in window"}}

// priceRow is a row of a plan's form: home, abroad or a calling code, and
// its rates as written ("" where the plan names none).
type priceRow struct {
	Key   string // "home", "abroad", or "c0", "c1"… for countries
	Label string
	Code  string // the calling code of a country row
	Rates []rateCell
}

type rateCell struct {
	Name, Label, Value, Default string
}

// plansData is the plans page (the list and the form of a new plan) or,
// with Plan, one plan's page (its form and its rates below cost).
type plansData struct {
	Plans     []domain.PricePlan
	Rows      []priceRow
	Rates     []struct{ Key, Label string }
	Plan      *domain.PricePlan
	BelowCost manage.BelowCostReport
	HasCards  bool
}

// formRows lays a sheet out as form rows, with extra empty country rows
// to add countries.
func formRows(sheet domain.PriceSheet, extra int) []priceRow {
	def := domain.DefaultPrices()
	cell := func(row string, r domain.RateSheet, base domain.Rates) []rateCell {
		out := make([]rateCell, len(rateNames))
		dflt := map[string]int64{"smsSegment": base.SMSSegment, "rcsMessage": base.RCSMessage, "waConversation": base.WAConversation,
			"waInWindow": base.WAInWindow}
		for i, n := range rateNames {
			out[i] = rateCell{Name: row + "." + n.Key, Label: n.Label, Default: strconv.FormatFloat(ledger.Credits(dflt[n.Key]), 'f', -1, 64)}
			if v, ok := r[n.Key]; ok {
				out[i].Value = strconv.FormatFloat(ledger.Credits(v), 'f', -1, 64)
			}
		}
		return out
	}
	rows := []priceRow{{Key: "home", Label: "Home country", Rates: cell("home", sheet.Home, def.Home)},
		{Key: "abroad", Label: "Abroad", Rates: cell("abroad", sheet.Abroad, def.Abroad)}}
	for i, cc := range sheet.Codes() {
		k := "c" + strconv.Itoa(i)
		rows = append(rows, priceRow{Key: k, Label: "+" + cc, Code: cc, Rates: cell(k, sheet.Countries[cc], def.Abroad)})
	}
	for i := 0; i < extra; i++ {
		k := "c" + strconv.Itoa(len(sheet.Countries)+i)
		rows = append(rows, priceRow{Key: k, Label: "Country", Rates: cell(k, nil, def.Abroad)})
	}
	return rows
}

// formSheet reads a plan's form into the price table the API takes, in
// credits; a bad number is refused naming its input.
func formSheet(f url.Values) ([]byte, map[string]string) {
	errs := map[string]string{}
	rates := func(row string) map[string]float64 {
		out := map[string]float64{}
		for _, n := range rateNames {
			v := strings.TrimSpace(f.Get(row + "." + n.Key))
			if v == "" {
				continue
			}
			c, err := strconv.ParseFloat(v, 64)
			if err != nil {
				errs[row+"."+n.Key] = "must be a number of credits"
				continue
			}
			out[n.Key] = c
		}
		return out
	}
	table := map[string]any{}
	if r := rates("home"); len(r) > 0 {
		table["home"] = r
	}
	if r := rates("abroad"); len(r) > 0 {
		table["abroad"] = r
	}
	countries := map[string]any{}
	for i := 0; i < 200; i++ {
		k := "c" + strconv.Itoa(i)
		if _, ok := f[k+".code"]; !ok {
			break
		}
		cc := strings.TrimPrefix(strings.TrimSpace(f.Get(k+".code")), "+")
		r := rates(k)
		if cc == "" {
			if len(r) > 0 {
				errs[k+".code"] = "needs a calling code"
			}
			continue
		}
		countries[cc] = r
	}
	if len(countries) > 0 {
		table["countries"] = countries
	}
	raw, _ := json.Marshal(table)
	return raw, errs
}

func (p *Panel) plansPage(w http.ResponseWriter, r *http.Request, s *session) {
	p.showPlans(w, r, s, http.StatusOK, &view{Notice: consoleNotice(r)}, nil)
}

func (p *Panel) showPlans(w http.ResponseWriter, r *http.Request, s *session, status int, v *view, rows []priceRow) {
	if !p.operatorOnly(w, r, s) {
		return
	}
	plans, err := p.cfg.Manage.PricePlans(r.Context(), s.Actor)
	if p.failed(w, r, s, err) {
		return
	}
	if rows == nil {
		rows = formRows(domain.PriceSheet{}, 2)
	}
	v.Title, v.Nav, v.S, v.Data = "Price plans", "plans", s, plansData{Plans: plans, Rows: rows, Rates: rateNames}
	p.render(w, r, status, "plans", v)
}

// postedRows are the rows of a refused plan form, as they were posted.
func postedRows(f url.Values) []priceRow {
	rows := formRows(domain.PriceSheet{}, 0)
	n := 0
	for ; n < 200; n++ {
		if _, ok := f["c"+strconv.Itoa(n)+".code"]; !ok {
			break
		}
	}
	rows = append(rows, formRows(domain.PriceSheet{}, n)[2:]...)
	for i := range rows {
		rows[i].Code = strings.TrimSpace(f.Get(rows[i].Key + ".code"))
		for j := range rows[i].Rates {
			rows[i].Rates[j].Value = strings.TrimSpace(f.Get(rows[i].Rates[j].Name))
		}
	}
	return rows
}

func (p *Panel) createPlan(w http.ResponseWriter, r *http.Request, s *session) {
	raw, errs := formSheet(r.PostForm)
	name, def := r.PostForm.Get("name"), r.PostForm.Get("default") == "on"
	var pl domain.PricePlan
	var err error
	if len(errs) == 0 {
		pl, err = p.cfg.Manage.CreatePricePlan(r.Context(), s.Actor, manage.PlanInput{Name: &name, Prices: raw, Default: &def})
		errs, _ = fieldErrors(err, nil)
	}
	if len(errs) > 0 {
		p.showPlans(w, r, s, http.StatusBadRequest, &view{Errors: errs, Form: map[string]string{"name": name,
			"default": r.PostForm.Get("default")}}, postedRows(r.PostForm))
		return
	}
	p.finish(w, r, s, err, "/operator/plans/"+url.PathEscape(pl.ID)+"?done=plan-created")
}

func (p *Panel) planPage(w http.ResponseWriter, r *http.Request, s *session) {
	p.showPlan(w, r, s, http.StatusOK, &view{Notice: consoleNotice(r)}, nil)
}

func (p *Panel) showPlan(w http.ResponseWriter, r *http.Request, s *session, status int, v *view, rows []priceRow) {
	if !p.operatorOnly(w, r, s) {
		return
	}
	pl, err := p.cfg.Manage.PricePlan(r.Context(), s.Actor, r.PathValue("id"))
	if p.failed(w, r, s, err) {
		return
	}
	sheet, err := domain.ParseSheet(pl.Prices)
	if p.failed(w, r, s, err) {
		return
	}
	if rows == nil {
		rows = formRows(sheet, 2)
	}
	below, err := p.cfg.Manage.PlanBelowCost(s.Actor, pl)
	if p.failed(w, r, s, err) {
		return
	}
	cards, _, err := p.cfg.Manage.RateCards(s.Actor)
	if p.failed(w, r, s, err) {
		return
	}
	if v.Form == nil {
		v.Form = map[string]string{"name": pl.Name}
		if pl.Default {
			v.Form["default"] = "on"
		}
	}
	v.Title, v.Nav, v.S = "Price plan "+pl.Name, "plans", s
	v.Data = plansData{Plan: &pl, Rows: rows, Rates: rateNames, BelowCost: below, HasCards: len(cards) > 0}
	p.render(w, r, status, "plans", v)
}

func (p *Panel) updatePlan(w http.ResponseWriter, r *http.Request, s *session) {
	raw, errs := formSheet(r.PostForm)
	name, def := r.PostForm.Get("name"), r.PostForm.Get("default") == "on"
	id := r.PathValue("id")
	var err error
	if len(errs) == 0 {
		_, err = p.cfg.Manage.UpdatePricePlan(r.Context(), s.Actor, id, manage.PlanInput{Name: &name, Prices: raw, Default: &def})
		errs, _ = fieldErrors(err, nil)
	}
	if len(errs) > 0 {
		p.showPlan(w, r, s, http.StatusBadRequest, &view{Errors: errs, Form: map[string]string{"name": name,
			"default": r.PostForm.Get("default")}}, postedRows(r.PostForm))
		return
	}
	p.finish(w, r, s, err, "/operator/plans/"+url.PathEscape(id)+"?done=plan-saved")
}

// Rate cards.

// rateCardRows bounds the prefixes a card shows at once; a prefix filter
// finds the others.
const rateCardRows = 200

type rateCardView struct {
	Provider string
	Channels []domain.Channel
	Prefixes int
	Rows     []rateCardRow
	More     bool
}

type rateCardRow struct {
	Prefix, CallingCode, Region string
	Cost                        int64
}

type rateCardsData struct {
	Cards    []rateCardView
	Currency string
	Prefix   string
}

func (p *Panel) rateCardsPage(w http.ResponseWriter, r *http.Request, s *session) {
	if !p.operatorOnly(w, r, s) {
		return
	}
	cards, currency, err := p.cfg.Manage.RateCards(s.Actor)
	if p.failed(w, r, s, err) {
		return
	}
	prefix := strings.TrimPrefix(strings.TrimSpace(r.URL.Query().Get("prefix")), "+")
	d := rateCardsData{Currency: currency, Prefix: prefix}
	for _, c := range cards {
		cv := rateCardView{Provider: c.Provider, Channels: c.Channels, Prefixes: c.Costs.Len()}
		c.Costs.Walk(func(pf string, cost int64) bool {
			if !strings.HasPrefix(pf, prefix) {
				return true
			}
			if len(cv.Rows) == rateCardRows {
				cv.More = true
				return false
			}
			cc := phone.CallingCodeOf(pf)
			cv.Rows = append(cv.Rows, rateCardRow{Prefix: pf, CallingCode: cc, Region: phone.RegionOf(cc), Cost: cost})
			return true
		})
		d.Cards = append(d.Cards, cv)
	}
	p.render(w, r, http.StatusOK, "ratecards", &view{Title: "Rate cards", Nav: "ratecards", S: s, Data: d,
		Form: map[string]string{"prefix": prefix}})
}

// Margins.

type marginRow struct {
	domain.MarginRow
	Label string
}

type marginsData struct {
	Rows     []marginRow
	Total    domain.MarginRow
	Currency string
	GroupBy  string
	Groups   []string
	Chart    *chart
}

func (p *Panel) marginsPage(w http.ResponseWriter, r *http.Request, s *session) {
	if !p.operatorOnly(w, r, s) {
		return
	}
	q := r.URL.Query()
	group := q.Get("groupBy")
	if group == "" {
		group = "day"
	}
	v := &view{Form: map[string]string{"from": q.Get("from"), "to": q.Get("to"), "groupBy": group}}
	report, err := p.cfg.Manage.Margins(r.Context(), s.Actor, manage.MarginQuery{From: q.Get("from"), To: q.Get("to"), GroupBy: group})
	status := http.StatusOK
	if errs, invalid := fieldErrors(err, nil); invalid {
		v.Errors, status, err = errs, http.StatusBadRequest, nil
	}
	if p.failed(w, r, s, err) {
		return
	}
	d := marginsData{Currency: report.Currency, GroupBy: group, Groups: domain.MarginGroups}
	var names map[string]string
	if group == "account" {
		accts, err := p.cfg.Manage.Accounts(r.Context(), s.Actor)
		if p.failed(w, r, s, err) {
			return
		}
		names = map[string]string{}
		for _, a := range accts {
			names[a.ID] = a.Name
		}
	}
	for _, row := range report.Rows {
		label := row.Key
		switch group {
		case "account":
			if n := names[row.Key]; n != "" {
				label = n
			}
		case "country":
			if reg := phone.RegionOf(row.Key); reg != "" {
				label = "+" + row.Key + " " + reg
			}
		}
		d.Rows = append(d.Rows, marginRow{MarginRow: row, Label: label})
		t := &d.Total
		t.Messages, t.Segments, t.Price, t.Cost = t.Messages+row.Messages, t.Segments+row.Segments, t.Price+row.Price, t.Cost+row.Cost
		t.Final, t.Delivered = t.Final+row.Final, t.Delivered+row.Delivered
	}
	if group == "day" {
		d.Chart = marginDayChart(marginDays(d.Rows, q.Get("from"), q.Get("to"), p.cfg.Now()), report.Currency)
	} else {
		sort.SliceStable(d.Rows, func(i, j int) bool { return d.Rows[i].Price-d.Rows[i].Cost > d.Rows[j].Price-d.Rows[j].Cost })
	}
	v.Title, v.Nav, v.S, v.Data = "Margins", "margins", s, d
	p.render(w, r, status, "margins", v)
}

// marginDayChart draws the margin of each day as a bar (below the axis
// on a day sold under cost) and what was sold as a line, with the shared
// chart helper.
func marginDayChart(rows []marginRow, currency string) *chart {
	if len(rows) == 0 {
		return nil
	}
	slots := make([]string, len(rows))
	margin, sold := make([]float64, len(rows)), make([]float64, len(rows))
	for i, r := range rows {
		slots[i], margin[i], sold[i] = r.Label, float64(r.Price-r.Cost), float64(r.Price)
	}
	c := drawChart(chartSpec{ID: "margin", Title: "Margin per day, " + slots[0] + " to " + slots[len(slots)-1], Slots: slots,
		LabelEvery: max(1, len(rows)/6), Series: []chartInput{{Name: "margin", Class: "margin", Values: margin},
			{Name: "sold", Class: "revenue", Values: sold, Line: true}}, Format: creditsOf, Unit: currency})
	c.Summary = "Margin per day from " + slots[0] + " to " + slots[len(slots)-1] + " (a loss below the axis)"
	return &c
}

// marginDays are the days of the report's range, each with its row (an
// empty one on a day without traffic), so that the chart's bars stand for
// days at an even pace. The range is the report's: the last 30 UTC days
// unless given.
func marginDays(rows []marginRow, from, to string, now time.Time) []marginRow {
	end := now.UTC().Truncate(24 * time.Hour)
	start := end.AddDate(0, 0, -29)
	if t, err := time.Parse(time.DateOnly, from); err == nil {
		start = t
	}
	if t, err := time.Parse(time.DateOnly, to); err == nil {
		end = t
	}
	byDay := make(map[string]marginRow, len(rows))
	for _, r := range rows {
		byDay[r.Key] = r
	}
	var out []marginRow
	for d := start; !d.After(end) && len(out) < 367; d = d.AddDate(0, 0, 1) {
		k := d.Format(time.DateOnly)
		r, ok := byDay[k]
		if !ok {
			r = marginRow{MarginRow: domain.MarginRow{Key: k}, Label: k}
		}
		out = append(out, r)
	}
	return out
}

// Prices.

type pricesData struct {
	View     manage.PriceView
	Rows     []priceTableRow
	Plans    []domain.PricePlan // operators: the plans to move the account to
	Operator bool
}

// priceTableRow is a destination of the Prices page with what each rate
// costs there and whether the account's own table set it.
type priceTableRow struct {
	Label string
	Rates []priceCell
}

type priceCell struct {
	Credits    int64
	Overridden bool
}

func priceTable(v manage.PriceView) []priceTableRow {
	row := func(label string, r domain.Rates, over domain.RateSheet) priceTableRow {
		vals := []int64{r.SMSSegment, r.RCSMessage, r.WAConversation, r.WAInWindow}
		out := priceTableRow{Label: label}
		for i, n := range rateNames {
			_, o := over[n.Key]
			out.Rates = append(out.Rates, priceCell{Credits: vals[i], Overridden: o})
		}
		return out
	}
	home := "Home (+" + v.Account.CountryCode + ")"
	rows := []priceTableRow{row(home, v.Prices.Home, v.Overrides.Home), row("Abroad (any other country)", v.Prices.Abroad, v.Overrides.Abroad)}
	codes := make([]string, 0, len(v.Prices.Countries))
	for cc := range v.Prices.Countries {
		codes = append(codes, cc)
	}
	sort.Strings(codes)
	for _, cc := range codes {
		label := "+" + cc
		if reg := phone.RegionOf(cc); reg != "" {
			label += " " + reg
		}
		rows = append(rows, row(label, v.Prices.Countries[cc], v.Overrides.Countries[cc]))
	}
	return rows
}

func (p *Panel) pricesPage(w http.ResponseWriter, r *http.Request, s *session) {
	if !p.needAccount(w, r, s) {
		return
	}
	pv, err := p.cfg.Manage.Prices(r.Context(), s.Actor, s.Account)
	if p.failed(w, r, s, err) {
		return
	}
	d := pricesData{View: pv, Rows: priceTable(pv), Operator: s.Actor.Operator()}
	if d.Operator {
		if d.Plans, err = p.cfg.Manage.PricePlans(r.Context(), s.Actor); p.failed(w, r, s, err) {
			return
		}
	}
	p.render(w, r, http.StatusOK, "prices", &view{Title: "Prices", Nav: "prices", S: s, Data: d, Notice: consoleNotice(r)})
}

func (p *Panel) setAccountPlan(w http.ResponseWriter, r *http.Request, s *session) {
	acct := r.PostForm.Get("account")
	_, err := p.cfg.Manage.SetAccountPlan(r.Context(), s.Actor, acct, r.PostForm.Get("plan"))
	if errs, invalid := fieldErrors(err, nil); invalid {
		msg := ""
		for _, m := range errs {
			msg = m
		}
		p.fail(w, r, http.StatusBadRequest, "The plan was not changed", "The plan "+msg+".")
		return
	}
	if errors.Is(err, manage.ErrNotFound) {
		err = manage.ErrNotFound
	}
	p.finish(w, r, s, err, "/prices?account="+url.QueryEscape(acct)+"&done=plan-set")
}
