package api

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/msgsvc/msgsvc/internal/api/view"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/message"
)

// UsageReader reads the charges counted per day, channel and calling code.
type UsageReader interface {
	UsageByDay(ctx context.Context, q domain.UsageQuery) ([]domain.UsageDelta, error)
}

// maxUsageDays bounds a usage report's range: a year, by day or by month.
const maxUsageDays = 366

// usage is GET /usage: what the key's environment was charged per day or
// month, channel and calling code, refunds deducted, from the counts kept
// as messages are charged.
func (s *Server) usage(w http.ResponseWriter, r *http.Request, c message.Caller) error {
	q, err := queryParams(r, "from", "to", "groupBy", "channel")
	if err != nil {
		return err
	}
	uq, byMonth, err := usageQuery(q, s.cfg.Now())
	if err != nil {
		return err
	}
	uq.AccountID, uq.Env = c.Account.ID, c.Key.Env
	days, err := s.cfg.Store.UsageByDay(r.Context(), uq)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, view.Usage(domain.UsageReport(days, byMonth), c.Account.Currency))
	return nil
}

// usageQuery reads the report's parameters, naming every bad one. Without
// to it ends today (UTC); without from it covers the 30 days up to to.
func usageQuery(q url.Values, now time.Time) (domain.UsageQuery, bool, error) {
	var out domain.UsageQuery
	var bad []domain.FieldError
	fail := func(field, msg string) { bad = append(bad, domain.FieldError{Field: field, Message: msg}) }
	day := func(name string, def int64) int64 {
		v := q.Get(name)
		if v == "" {
			return def
		}
		t, err := time.Parse(time.DateOnly, v)
		if err != nil {
			fail(name, "must be a date as YYYY-MM-DD (a UTC day)")
			return def
		}
		return domain.DayNumber(t)
	}
	out.To = day("to", domain.DayNumber(now))
	out.From = day("from", out.To-29)
	switch {
	case out.To < out.From:
		fail("to", "must not be before from")
	case out.To-out.From >= maxUsageDays:
		fail("from", "must be at most 366 days before to")
	}
	byMonth := false
	switch q.Get("groupBy") {
	case "", "day":
	case "month":
		byMonth = true
	default:
		fail("groupBy", "must be day or month")
	}
	if v := q.Get("channel"); v != "" {
		ch, err := domain.ParseChannel(v)
		if err != nil {
			fail("channel", "must be one of SMS, WHATSAPP, RCS")
		}
		out.Channel = ch
	}
	if len(bad) > 0 {
		return out, false, validation("The usage parameters are not valid.", bad...)
	}
	return out, byMonth, nil
}
