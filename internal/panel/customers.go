package panel

import (
	"cmp"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/manage"
)

// Customers: a reseller's owners and admins (and operators on a reseller
// they opened) list its children with their balances, status and the
// reseller's margin on each, create children, and on one child's page set
// its prices and billing, move credits both ways, and suspend or resume
// it. Every action is internal/manage's, which checks the role and the
// tree again: this file only reads forms and shows refusals.

type customersData struct {
	View manage.CustomersView
}

// Margin is the reseller's margin row of the child id (zero without traffic).
func (d customersData) Margin(id string) domain.MarginRow { return d.View.Margins[id] }

func (p *Panel) customersPage(w http.ResponseWriter, r *http.Request, s *session) {
	p.showCustomers(w, r, s, http.StatusOK, &view{Notice: notice(r)})
}

func (p *Panel) showCustomers(w http.ResponseWriter, r *http.Request, s *session, status int, v *view) {
	if !p.needAccount(w, r, s) {
		return
	}
	cv, err := p.cfg.Manage.Customers(r.Context(), s.Actor, s.Account)
	if p.failed(w, r, s, err) {
		return
	}
	if v.Form == nil {
		v.Form = map[string]string{"country": s.Current.CountryCode}
	}
	v.Title, v.Nav, v.S, v.Data = "Customers", "customers", s, customersData{View: cv}
	p.render(w, r, status, "customers", v)
}

func (p *Panel) createCustomer(w http.ResponseWriter, r *http.Request, s *session) {
	if !p.needAccount(w, r, s) { // an operator creates under the reseller it opened, never at the top
		return
	}
	f := r.PostForm
	in := manage.NewChild{ParentID: s.Account, Name: f.Get("name"), Country: strings.TrimSpace(f.Get("country")),
		Billing: f.Get("billing"), Reseller: f.Get("reseller") == "on", AllowLoss: f.Get("allowLoss") == "on"}
	if raw := strings.TrimSpace(f.Get("prices")); raw != "" {
		in.Prices = []byte(raw)
	}
	acct, err := p.cfg.Manage.CreateAccount(r.Context(), s.Actor, in)
	errs, invalid := fieldErrors(err, nil)
	if errors.Is(err, domain.ErrTreeTooDeep) {
		errs, invalid = map[string]string{"reseller": "This customer cannot resell: it would stand at the deepest level of the tree (three below the operator). Nothing was created."}, true
	}
	if invalid {
		v := &view{Errors: explainPrices(errs, f.Get("prices"), in.Country, *s.Current), Form: map[string]string{"name": f.Get("name"), "country": f.Get("country"),
			"billing": f.Get("billing"), "prices": f.Get("prices"), "reseller": f.Get("reseller"), "allowLoss": f.Get("allowLoss")}}
		p.showCustomers(w, r, s, http.StatusBadRequest, v)
		return
	}
	p.finish(w, r, s, err, s.link("/customers/"+url.PathEscape(acct.ID)+"?done=customerCreated"))
}

// explainPrices turns the margin guard's refusal (internal/manage's, in
// the API's words) into the rates that are below the parent's, in
// credits, and what to do about it. raw is the table sent and home the
// child's calling code.
func explainPrices(errs map[string]string, raw, home string, parent domain.Account) map[string]string {
	m, ok := errs["prices"]
	if !ok || !strings.HasPrefix(m, "undercut") {
		return errs
	}
	what := "at least one rate"
	_, child, err := ledger.ParsePriceTable([]byte(cmp.Or(strings.TrimSpace(raw), "{}")), home)
	own, perr := parent.PriceList()
	if err == nil && perr == nil {
		if short := domain.PriceShortfalls(child, home, own, parent.CountryCode); len(short) > 0 {
			f := short[0]
			where := "abroad"
			if f.Destination != "abroad" {
				where = "to +" + f.Destination
			}
			what = rateLabel(f.Rate) + " " + where + ": " + credits(f.Child) + " against your " + credits(f.Parent)
			if len(short) > 1 {
				what += " (and " + strconv.Itoa(len(short)-1) + " more)"
			}
		}
	}
	errs["prices"] = "Below your own prices: " + what + ". Raise them, or tick “Sell below my cost” to set them anyway."
	return errs
}

// rateLabel names a rate of a price table as the forms do.
func rateLabel(key string) string {
	for _, r := range rateNames {
		if r.Key == key {
			return r.Label
		}
	}
	return key
}

func credits(micro int64) string { return strconv.FormatFloat(ledger.Credits(micro), 'f', -1, 64) }

type customerData struct {
	View manage.CustomerView
	// Own and Theirs are the parent's and the child's price tables, side
	// by side; PricesJSON is the child's as the prices form takes it.
	Own, Theirs domain.Prices
	PricesJSON  string
	Chart       chart
}

func (p *Panel) customerPage(w http.ResponseWriter, r *http.Request, s *session) {
	p.showCustomer(w, r, s, http.StatusOK, &view{Notice: notice(r)})
}

func (p *Panel) showCustomer(w http.ResponseWriter, r *http.Request, s *session, status int, v *view) {
	if !p.needAccount(w, r, s) {
		return
	}
	cv, err := p.cfg.Manage.Customer(r.Context(), s.Actor, s.Account, r.PathValue("id"))
	if p.failed(w, r, s, err) {
		return
	}
	d := customerData{View: cv, Chart: usageChart(cv.Balance.Usage, cv.Balance.Since, manage.UsageDays)}
	if d.Own, err = cv.Parent.PriceList(); err == nil {
		d.Theirs, err = cv.Account.PriceList()
	}
	if p.failed(w, r, s, err) {
		return
	}
	if cv.Account.Prices != "" {
		raw, _ := json.MarshalIndent(ledger.PriceTableJSON(d.Theirs), "", "  ")
		d.PricesJSON = string(raw)
	}
	if _, sent := v.Form["prices"]; !sent {
		if v.Form == nil {
			v.Form = map[string]string{}
		}
		v.Form["prices"] = d.PricesJSON
	}
	v.Title, v.Nav, v.S, v.Data = cv.Account.Name, "customers", s, d
	p.render(w, r, status, "customer", v)
}

// customerDone is where a change of the child id goes: its page, saying
// what was done.
func customerDone(s *session, id, done string) string {
	return s.link("/customers/" + url.PathEscape(id) + "?done=" + done)
}

func (p *Panel) setCustomerPrices(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	raw := strings.TrimSpace(r.PostForm.Get("prices"))
	if raw == "" {
		raw = "{}" // an empty box restores the defaults
	}
	_, err := p.cfg.Manage.UpdateAccount(r.Context(), s.Actor, id, manage.AccountChange{Prices: []byte(raw),
		AllowLoss: r.PostForm.Get("allowLoss") == "on"})
	if errs, ok := fieldErrors(err, nil); ok {
		if cv, cerr := p.cfg.Manage.Customer(r.Context(), s.Actor, s.Account, id); cerr == nil {
			errs = explainPrices(errs, raw, cv.Account.CountryCode, cv.Parent)
		}
		p.showCustomer(w, r, s, http.StatusBadRequest, &view{Errors: errs,
			Form: map[string]string{"prices": r.PostForm.Get("prices"), "allowLoss": r.PostForm.Get("allowLoss")}})
		return
	}
	p.finish(w, r, s, err, customerDone(s, id, "prices"))
}

func (p *Panel) setCustomerBilling(w http.ResponseWriter, r *http.Request, s *session) {
	id, billing := r.PathValue("id"), r.PostForm.Get("billing")
	_, err := p.cfg.Manage.UpdateAccount(r.Context(), s.Actor, id, manage.AccountChange{Billing: &billing})
	if errs, ok := fieldErrors(err, nil); ok {
		p.showCustomer(w, r, s, http.StatusBadRequest, &view{Errors: errs})
		return
	}
	p.finish(w, r, s, err, customerDone(s, id, "billing"))
}

// transferCustomer moves credits to the child (direction "in") or takes
// them back ("back"); the amount is always entered as a positive number.
func (p *Panel) transferCustomer(w http.ResponseWriter, r *http.Request, s *session) {
	id, dir := r.PathValue("id"), r.PostForm.Get("direction")
	amount, perr := strconv.ParseFloat(strings.TrimSpace(r.PostForm.Get("amount")), 64)
	errs := map[string]string{}
	switch {
	case perr != nil || amount <= 0:
		errs["amount"] = "must be a positive number of credits"
	case dir != "in" && dir != "back":
		errs["amount"] = "needs a direction: press Top up or Take back"
	}
	var err error
	if len(errs) == 0 {
		if dir == "back" {
			amount = -amount
		}
		_, err = p.cfg.Manage.Transfer(r.Context(), s.Actor, id, amount, r.PostForm.Get("note"))
		switch fe, ok := fieldErrors(err, nil); {
		case ok:
			errs = fe
		case errors.Is(err, ledger.ErrInsufficientCredits):
			errs["amount"] = "is more than your own balance holds. Nothing was moved."
		case errors.Is(err, domain.ErrChildShort):
			errs["amount"] = "is more than this customer's balance holds: a balance never goes below zero. Nothing was moved."
		}
	}
	if len(errs) > 0 {
		p.showCustomer(w, r, s, http.StatusBadRequest, &view{Errors: errs,
			Form: map[string]string{"amount": r.PostForm.Get("amount"), "note": r.PostForm.Get("note")}})
		return
	}
	done := "transferIn"
	if dir == "back" {
		done = "transferBack"
	}
	p.finish(w, r, s, err, customerDone(s, id, done))
}

func (p *Panel) suspendCustomer(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	_, err := p.cfg.Manage.SuspendAccount(r.Context(), s.Actor, id)
	p.finish(w, r, s, err, customerDone(s, id, "suspended"))
}

func (p *Panel) resumeCustomer(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	_, err := p.cfg.Manage.ResumeAccount(r.Context(), s.Actor, id)
	p.finish(w, r, s, err, customerDone(s, id, "resumed"))
}
