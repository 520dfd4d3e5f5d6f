package panel

import (
	"net/http"
	"net/url"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/exportcsv"
	"github.com/msgsvc/msgsvc/internal/manage"
)

// The operator's console in the panel: monthly statements (a page that
// prints as the document, and its CSV) and the operators' search of
// messages across accounts.

// monthOption is a month of the picker: YYYY-MM and its name.
type monthOption struct{ Value, Label string }

type statementData struct {
	manage.StatementView
	Charged int64
	// Months are the months the picker offers, newest first.
	Months []monthOption
	// CSV, Prev and Next are links ("" when there is no such month).
	CSV, Prev, Next string
	Printed         time.Time
}

func (p *Panel) statementsIndex(w http.ResponseWriter, r *http.Request, s *session) {
	if !p.needAccount(w, r, s) {
		return
	}
	month := r.URL.Query().Get("month")
	if month == "" {
		month = p.cfg.Now().UTC().Format("2006-01")
	}
	http.Redirect(w, r, s.link("/statements/"+url.PathEscape(month)), http.StatusSeeOther)
}

func (p *Panel) statementPage(w http.ResponseWriter, r *http.Request, s *session) {
	if !p.needAccount(w, r, s) {
		return
	}
	v, err := p.cfg.Manage.Statement(r.Context(), s.Actor, s.Account, r.PathValue("month"))
	if fe, ok := fieldErrors(err, nil); ok {
		p.render(w, r, http.StatusBadRequest, "error", &view{Title: "No such statement", Nav: "balance", S: s,
			Data: "The month " + fe["month"] + "."})
		return
	}
	if p.failed(w, r, s, err) {
		return
	}
	if r.URL.Query().Get("format") == "csv" {
		h := w.Header()
		h.Set("Content-Type", "text/csv; charset=utf-8")
		h.Set("Content-Disposition", `attachment; filename="statement-`+v.Account.ID+"-"+v.Month+`.csv"`)
		if err := exportcsv.Statement(exportcsv.New(w), v.Account.ID, v.Month, v.Account.Currency, v.Statement); err != nil {
			p.cfg.Log.Warn("statement csv not written", "account", v.Account.ID, "err", err)
		}
		return
	}
	d := statementData{StatementView: v, Charged: v.Statement.Charged(), CSV: s.link("/statements/" + v.Month + "?format=csv"),
		Printed: p.cfg.Now().UTC()}
	months := p.cfg.Manage.StatementMonths(v.Account)
	for i, m := range months {
		d.Months = append(d.Months, monthOption{Value: m, Label: monthName(m)})
		if m != v.Month {
			continue
		}
		if i > 0 {
			d.Next = s.link("/statements/" + months[i-1])
		}
		if i+1 < len(months) {
			d.Prev = s.link("/statements/" + months[i+1])
		}
	}
	p.render(w, r, http.StatusOK, "statement", &view{Title: "Statement " + monthName(v.Month), Nav: "balance", S: s, Data: d})
}

// monthName spells YYYY-MM as "November 2026".
func monthName(m string) string {
	t, err := time.Parse("2006-01", m)
	if err != nil {
		return m
	}
	return t.Format("January 2006")
}

type searchData struct {
	messagesData
	// Accounts names the accounts of the messages shown.
	Accounts map[string]string
}

// searchAll is the operators' message search across accounts: the
// filters of an account's search, each message with its account.
func (p *Panel) searchAll(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	form, mq, errs := messageQueryOf(q, "to", "status", "campaignId", "reference", "from", "until", "environment")
	v := &view{Title: "Messages of every account", Nav: "search", S: s, Form: form, Errors: errs}
	d := searchData{messagesData: messagesData{Statuses: domain.Statuses, Searched: len(q) > 0}, Accounts: map[string]string{}}
	if len(errs) == 0 {
		page, err := p.cfg.Manage.SearchAllMessages(r.Context(), s.Actor, mq)
		if fe, ok := fieldErrors(err, map[string]string{"createdFrom": "from", "createdTo": "until"}); ok {
			v.Errors = fe
		} else if p.failed(w, r, s, err) {
			return
		}
		d.Page = page
		if page.Next != "" {
			next := url.Values{}
			for k, val := range q {
				next[k] = val
			}
			next.Set("cursor", page.Next)
			d.NextLink = "/messages?" + next.Encode()
		}
		if len(page.Messages) > 0 {
			accts, err := p.cfg.Manage.Accounts(r.Context(), s.Actor)
			if p.failed(w, r, s, err) {
				return
			}
			for _, a := range accts {
				d.Accounts[a.ID] = a.Name
			}
		}
	}
	v.Data = d
	status := http.StatusOK
	if len(v.Errors) > 0 {
		status = http.StatusBadRequest
	}
	p.render(w, r, status, "search", v)
}
