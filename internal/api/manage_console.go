package api

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/exportcsv"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/manage"
)

// ConsoleAdmin is the operator's console: monthly statements, the CSV
// exports and the search of messages across accounts.
type ConsoleAdmin interface {
	Statement(ctx context.Context, a manage.Actor, accountID, month string) (manage.StatementView, error)
	ExportMessages(ctx context.Context, a manage.Actor, accountID string, q manage.MessageQuery, all bool, page func([]domain.Message) error) error
	ExportLedger(ctx context.Context, a manage.Actor, accountID string, q manage.ExportRange, page func([]ledger.Entry) error) error
	ExportUsage(ctx context.Context, a manage.Actor, accountID string, q manage.ExportRange, env string, page func([]domain.UsageDelta) error) error
	SearchAllMessages(ctx context.Context, a manage.Actor, q manage.MessageQuery) (manage.MessagePage, error)
}

func (s *Server) manageConsoleRoutes(base string) {
	s.managed("GET "+base+"/statements/{month}", s.statement)
	s.managed("GET "+base+"/exports/messages.csv", s.exportMessages)
	s.managed("GET "+base+"/exports/ledger.csv", s.exportLedger)
	s.managed("GET "+base+"/exports/usage.csv", s.exportUsage)
	s.managed("GET "+base+"/exports/margins.csv", s.exportMargins)
}

type chargeView struct {
	Channel  string  `json:"channel"`
	Country  string  `json:"country"`
	Messages int64   `json:"messages"`
	Segments int64   `json:"segments"`
	Credits  float64 `json:"credits"`
}

type statementView struct {
	AccountID string       `json:"accountId"`
	Month     string       `json:"month"`
	Currency  string       `json:"currency"`
	Opening   float64      `json:"opening"`
	TopUps    float64      `json:"topUps"`
	Transfers float64      `json:"transfers"`
	Charges   []chargeView `json:"charges"`
	Refunds   float64      `json:"refunds"`
	Closing   float64      `json:"closing"`
}

func (s *Server) statement(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	format := r.URL.Query().Get("format")
	if format != "" && format != "json" && format != "csv" {
		return fieldError("format", "must be json or csv")
	}
	v, err := s.cfg.Manage.Statement(r.Context(), a, acct(r), r.PathValue("month"))
	if err != nil {
		return err
	}
	st := v.Statement
	if format == "csv" {
		csvHeaders(w, "statement-"+v.Account.ID+"-"+v.Month+".csv")
		w.WriteHeader(http.StatusOK)
		if err := exportcsv.Statement(exportcsv.New(w), v.Account.ID, v.Month, v.Account.Currency, st); err != nil {
			panic(http.ErrAbortHandler)
		}
		return nil
	}
	out := statementView{AccountID: v.Account.ID, Month: v.Month, Currency: v.Account.Currency, Opening: ledger.Credits(st.Opening),
		TopUps: ledger.Credits(st.TopUps), Transfers: ledger.Credits(st.Transfers), Charges: []chargeView{},
		Refunds: ledger.Credits(st.Refunds), Closing: ledger.Credits(st.Closing)}
	for _, c := range st.Charges {
		out.Charges = append(out.Charges, chargeView{Channel: c.Channel, Country: c.Country, Messages: c.Messages, Segments: c.Segments,
			Credits: ledger.Credits(c.Amount)})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func csvHeaders(w http.ResponseWriter, name string) {
	h := w.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", `attachment; filename="`+url.PathEscape(name)+`"`)
}

// csvStream writes an export's pages as they come: the header row with
// the first page, a flush after each, and the connection's write deadline
// moved on by each page, so that a long export is bounded by the pace of
// its pages, not by the server's write timeout. An error before the first
// page is the request's problem; after it, the response is cut short (no
// terminating chunk), so that no client takes a partial file for a whole
// one.
type csvStream struct {
	w       http.ResponseWriter
	name    string
	header  []string
	out     *exportcsv.Writer
	started bool
}

// pageWait is how long one page of an export may take to be written.
const pageWait = time.Minute

func (c *csvStream) begin() error {
	if c.started {
		return nil
	}
	c.started = true
	csvHeaders(c.w, c.name)
	c.w.WriteHeader(http.StatusOK)
	c.out = exportcsv.New(c.w)
	return c.out.Row(c.header...)
}

func (c *csvStream) flush() error {
	if err := c.out.Flush(); err != nil {
		return err
	}
	rc := http.NewResponseController(c.w)
	_ = rc.SetWriteDeadline(time.Now().Add(pageWait)) // not every writer has a deadline to move
	return rc.Flush()
}

// finish ends the export: err before the first page goes back to the
// handler as the request's problem.
func (c *csvStream) finish(err error) error {
	if err == nil {
		return nil
	}
	if !c.started {
		return err
	}
	panic(http.ErrAbortHandler)
}

func streamPages[T any](w http.ResponseWriter, name string, header []string, row func(*exportcsv.Writer, T) error) (*csvStream, func([]T) error) {
	c := &csvStream{w: w, name: name, header: header}
	return c, func(page []T) error {
		if err := c.begin(); err != nil {
			return err
		}
		for _, v := range page {
			if err := row(c.out, v); err != nil {
				return err
			}
		}
		return c.flush()
	}
}

func (s *Server) exportMessages(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	q := r.URL.Query()
	all, err := allAccounts(r)
	if err != nil {
		return err
	}
	c, page := streamPages(w, "messages.csv", exportcsv.MessageHeader, exportcsv.Message)
	return c.finish(s.cfg.Manage.ExportMessages(r.Context(), a, acct(r), messageQuery(q), all, page))
}

func (s *Server) exportLedger(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	q := r.URL.Query()
	c, page := streamPages(w, "ledger.csv", exportcsv.LedgerHeader, exportcsv.Ledger)
	return c.finish(s.cfg.Manage.ExportLedger(r.Context(), a, acct(r), manage.ExportRange{From: q.Get("from"), To: q.Get("to")}, page))
}

func (s *Server) exportUsage(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	q := r.URL.Query()
	c, page := streamPages(w, "usage.csv", exportcsv.UsageHeader, exportcsv.Usage)
	return c.finish(s.cfg.Manage.ExportUsage(r.Context(), a, acct(r), manage.ExportRange{From: q.Get("from"), To: q.Get("to")},
		q.Get("environment"), page))
}

// exportMargins writes the margins report (operators', or a reseller's
// per child) as CSV: its rows are one per group, few whatever the traffic.
func (s *Server) exportMargins(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	q := r.URL.Query()
	rep, err := s.cfg.Manage.Margins(r.Context(), a, manage.MarginQuery{From: q.Get("from"), To: q.Get("to"), GroupBy: q.Get("groupBy"),
		Account: acct(r)})
	if err != nil {
		return err
	}
	c, page := streamPages(w, "margins.csv", exportcsv.MarginHeader, exportcsv.Margin)
	return c.finish(page(rep.Rows))
}

// messageQuery reads the message list's filters.
func messageQuery(q url.Values) manage.MessageQuery {
	return manage.MessageQuery{Status: q.Get("status"), To: q.Get("to"), CampaignID: q.Get("campaignId"), Reference: q.Get("reference"),
		CreatedFrom: q.Get("createdFrom"), CreatedTo: q.Get("createdTo"), Environment: q.Get("environment"), Limit: q.Get("limit"),
		Cursor: q.Get("cursor")}
}

// allAccounts reads ?allAccounts=true|false.
func allAccounts(r *http.Request) (bool, error) {
	switch r.URL.Query().Get("allAccounts") {
	case "", "false":
		return false, nil
	case "true":
		if acct(r) != "" {
			return false, fieldError("allAccounts", "cannot be combined with account")
		}
		return true, nil
	}
	return false, fieldError("allAccounts", "must be true or false")
}
