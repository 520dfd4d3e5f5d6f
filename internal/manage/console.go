package manage

import (
	"context"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/user"
)

// The operator's console: monthly statements, exports read a page at a
// time, and the operators' search of messages across accounts. Statements
// and exports are billing documents and bulk copies of an account's
// traffic, so they need an admin (or owner) of the account, a reseller's
// admin for the accounts below it, or an operator; viewers and developers
// keep the balance page.

// ConsoleStore is what statements, exports and the search across
// accounts read.
type ConsoleStore interface {
	Statement(ctx context.Context, accountID string, from, to time.Time) (ledger.Statement, error)
	LedgerRange(ctx context.Context, accountID string, from, to time.Time, after string, limit int) ([]ledger.Entry, error)
	SearchAllMessages(ctx context.Context, f domain.MessageFilter) ([]domain.Message, error)
	UsageByDay(ctx context.Context, q domain.UsageQuery) ([]domain.UsageDelta, error)
}

// DefaultExportPage is how many rows an export reads per query: its memory
// is one page, whatever the export's size.
const DefaultExportPage = 1000

// StatementView is an account's statement of one month.
type StatementView struct {
	Account   domain.Account
	Month     string // YYYY-MM
	Statement ledger.Statement
	// Open: the month is the current one, so its closing balance is the
	// balance now and will still move.
	Open bool
}

// Statement reads an account's statement of a month (YYYY-MM, UTC): its
// opening balance, top-ups, transfers, charges by channel and country,
// refunds and closing balance, which is the ledger's sum at the month's
// end. A statement that does not add up is an error, never a document.
func (s *Service) Statement(ctx context.Context, a Actor, accountID, month string) (StatementView, error) {
	acct, _, err := s.reach(ctx, a, accountID, user.Admin)
	if err != nil {
		return StatementView{}, err
	}
	start, err := time.Parse("2006-01", month)
	if err != nil {
		return StatementView{}, invalid("month", "must be a month YYYY-MM, e.g. 2026-11")
	}
	now := s.now().UTC()
	thisMonth := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	if start.After(thisMonth) {
		return StatementView{}, invalid("month", "is after the current month")
	}
	end := start.AddDate(0, 1, 0)
	st, err := s.st.Statement(ctx, acct.ID, start, end)
	if err != nil {
		return StatementView{}, err
	}
	if !st.Balanced() {
		return StatementView{}, fmt.Errorf("statement of %s for %s does not add up: closing %d, parts %d", acct.ID, month, st.Closing,
			st.Opening+st.TopUps+st.Transfers-st.Charged()+st.Refunds)
	}
	st.Charges = nonNil(st.Charges)
	return StatementView{Account: acct, Month: month, Statement: st, Open: start.Equal(thisMonth)}, nil
}

// StatementMonths are the months a statement may be asked for, newest
// first: from the account's creation to the current month.
func (s *Service) StatementMonths(acct domain.Account) []string {
	now := s.now().UTC()
	m := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	first := time.Date(acct.CreatedAt.Year(), acct.CreatedAt.Month(), 1, 0, 0, 0, 0, time.UTC)
	var out []string
	for ; !m.Before(first) && len(out) < 120; m = m.AddDate(0, -1, 0) {
		out = append(out, m.Format("2006-01"))
	}
	return out
}

// ExportRange is the days an export covers, YYYY-MM-DD, both inclusive;
// empty From is the current month's first day, empty To today.
type ExportRange struct{ From, To string }

func (s *Service) exportDays(q ExportRange) (from, to time.Time, err error) {
	var p problems
	today := s.now().UTC().Truncate(24 * time.Hour)
	from, to = time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, time.UTC), today
	day := func(field, v string, into *time.Time) {
		if v == "" {
			return
		}
		t, err := time.Parse(time.DateOnly, v)
		if err != nil {
			p.add(field, "must be a date YYYY-MM-DD")
			return
		}
		*into = t
	}
	day("from", q.From, &from)
	day("to", q.To, &to)
	if p.err("") == nil && to.Before(from) {
		p.add("to", "must not be before from")
	}
	return from, to, p.err("The export's range is not valid.")
}

// ExportMessages reads an account's messages matching q (its limit and
// cursor are not read), newest first, a page at a time, and hands each
// page to page: at least once, with an empty page when nothing matches,
// so that the caller writes its header before any error of a later page.
// all asks for every account's messages, which only operators may.
// Messages are never handed with their texts.
func (s *Service) ExportMessages(ctx context.Context, a Actor, accountID string, q MessageQuery, all bool,
	page func([]domain.Message) error) error {
	search := s.st.SearchMessages
	var acctID string
	if all {
		if err := operator(a); err != nil {
			return err
		}
		search = s.st.SearchAllMessages
	} else {
		acct, _, err := s.reach(ctx, a, accountID, user.Admin)
		if err != nil {
			return err
		}
		acctID = acct.ID
	}
	q.Limit, q.Cursor = "", ""
	f, err := q.filter()
	if err != nil {
		return err
	}
	f.AccountID, f.Limit = acctID, s.exportPage
	for first := true; ; first = false {
		msgs, err := search(ctx, f)
		if err != nil {
			return err
		}
		for i := range msgs {
			hideText(&msgs[i])
		}
		if len(msgs) > 0 || first {
			if err := page(msgs); err != nil {
				return err
			}
		}
		if len(msgs) < f.Limit {
			return nil
		}
		f.Before = msgs[len(msgs)-1].ID
	}
}

// ExportLedger reads an account's ledger lines of the days of q, oldest
// first, a page at a time (page is called as in ExportMessages).
func (s *Service) ExportLedger(ctx context.Context, a Actor, accountID string, q ExportRange, page func([]ledger.Entry) error) error {
	acct, _, err := s.reach(ctx, a, accountID, user.Admin)
	if err != nil {
		return err
	}
	from, to, err := s.exportDays(q)
	if err != nil {
		return err
	}
	after := ""
	for first := true; ; first = false {
		lines, err := s.st.LedgerRange(ctx, acct.ID, from, to.AddDate(0, 0, 1), after, s.exportPage)
		if err != nil {
			return err
		}
		if len(lines) > 0 || first {
			if err := page(lines); err != nil {
				return err
			}
		}
		if len(lines) < s.exportPage {
			return nil
		}
		after = lines[len(lines)-1].ID
	}
}

// usageSpan is how many days of usage one query of an export reads: the
// kept counts are a row per day, channel and calling code.
const usageSpan = 31

// ExportUsage reads an account's usage counts of one environment (live
// when empty) per day, channel and calling code over the days of q,
// oldest first, a span of days at a time (page is called as in
// ExportMessages).
func (s *Service) ExportUsage(ctx context.Context, a Actor, accountID string, q ExportRange, env string,
	page func([]domain.UsageDelta) error) error {
	acct, _, err := s.reach(ctx, a, accountID, user.Admin)
	if err != nil {
		return err
	}
	from, to, err := s.exportDays(q)
	if err != nil {
		return err
	}
	e := domain.Live
	if env != "" {
		if e, err = domain.ParseEnvironment(env); err != nil {
			return invalid("environment", "must be test or live")
		}
	}
	last := domain.DayNumber(to)
	for day, first := domain.DayNumber(from), true; day <= last; day, first = day+usageSpan, false {
		rows, err := s.st.UsageByDay(ctx, domain.UsageQuery{AccountID: acct.ID, Env: e, From: day, To: min(day+usageSpan-1, last)})
		if err != nil {
			return err
		}
		if len(rows) > 0 || first {
			if err := page(rows); err != nil {
				return err
			}
		}
	}
	return nil
}

// SearchAllMessages is the operators' search of every account's messages,
// with the filters of SearchMessages, newest first.
func (s *Service) SearchAllMessages(ctx context.Context, a Actor, q MessageQuery) (MessagePage, error) {
	if err := operator(a); err != nil {
		return MessagePage{}, err
	}
	f, err := q.filter()
	if err != nil {
		return MessagePage{}, err
	}
	limit := f.Limit
	f.Limit++
	msgs, err := s.st.SearchAllMessages(ctx, f)
	if err != nil {
		return MessagePage{}, err
	}
	page := MessagePage{Messages: nonNil(msgs)}
	if len(msgs) > limit {
		page.Messages = msgs[:limit]
		page.Next = cursorOf(msgs[limit-1].ID)
	}
	return page, nil
}

// cursorOf is the cursor of the page after the message id.
func cursorOf(messageID string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(messageID))
}
