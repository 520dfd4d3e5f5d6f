package panel

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/manage"
	"github.com/msgsvc/msgsvc/internal/user"
)

// Operator → Fraud: the messages the fraud guard holds, each with the
// rule that stopped it and its figures, to release or reject; and what
// its rules stopped or flagged over time, as a chart by rule, account or
// range, with the busiest keys in a table.

type fraudData struct {
	Held      []heldRow
	OlderLink string
	Chart     chart
	Top       []fraudTop
	Accounts  []domain.Account
	Account   string // the account the page is narrowed to ("": all)
	Group     string
	Groups    []struct{ Value, Name string }
	Days      int // the chart's window: 1 or 7
	Since     time.Time
}

type heldRow struct {
	domain.Message
	AccountName string
	Why         string
}

// fraudTop is one account's decisions of one rule on one key over the
// window.
type fraudTop struct {
	AccountID, AccountName string
	Rule, Key              string
	Action                 domain.FraudAction
	Messages               int64
	First, Last            time.Time
}

// fraudTopRows is how many of the busiest keys the table lists.
const fraudTopRows = 20

func (p *Panel) fraudPage(w http.ResponseWriter, r *http.Request, s *session) {
	p.showFraud(w, r, s, http.StatusOK, &view{Notice: notice(r)})
}

func (p *Panel) showFraud(w http.ResponseWriter, r *http.Request, s *session, status int, v *view) {
	if !s.Actor.Can(user.Operator) {
		p.actionError(w, r, s, manage.ErrForbidden)
		return
	}
	q := r.URL.Query()
	d := fraudData{Account: s.Account, Group: q.Get("by"), Groups: fraudGroups, Days: 1}
	if d.Group != "account" && d.Group != "key" {
		d.Group = "rule"
	}
	if q.Get("days") == "7" {
		d.Days = 7
	}
	accts, err := p.cfg.Manage.Accounts(r.Context(), s.Actor)
	if p.failed(w, r, s, err) {
		return
	}
	d.Accounts = accts
	names := map[string]string{}
	for _, a := range accts {
		names[a.ID] = a.Name
	}
	held, err := p.cfg.Manage.HeldMessages(r.Context(), s.Actor, manage.HeldQuery{AccountID: s.Account, Limit: 100, Cursor: q.Get("cursor")})
	if p.failed(w, r, s, err) {
		return
	}
	for _, m := range held.Messages {
		d.Held = append(d.Held, heldRow{Message: m, AccountName: names[m.AccountID], Why: decisionText(m.Fraud)})
	}
	if held.NextCursor != "" {
		d.OlderLink = fraudLink(d, url.Values{"cursor": {held.NextCursor}})
	}
	now := p.cfg.Now().UTC()
	hours := 24 * d.Days
	d.Since = now.Truncate(time.Hour).Add(-time.Duration(hours-1) * time.Hour)
	rows, err := p.cfg.Manage.FraudBlocks(r.Context(), s.Actor, manage.FraudBlocksQuery{From: d.Since, To: d.Since.Add(time.Duration(hours) * time.Hour),
		AccountID: s.Account})
	if p.failed(w, r, s, err) {
		return
	}
	d.Chart = fraudChart(rows, d.Since, hours, d.Group, names)
	d.Top = fraudTops(rows, names)
	// The page is about every account; a chosen one narrows it without
	// opening that account's pages.
	s.Account, s.Current = "", nil
	v.Title, v.Nav, v.S, v.Data = "Fraud guard", "fraud", s, d
	p.render(w, r, status, "fraud", v)
}

// fraudLink is the page's address with its choices and more.
func fraudLink(d fraudData, more url.Values) string {
	q := url.Values{}
	if d.Account != "" {
		q.Set("account", d.Account)
	}
	if d.Group != "rule" {
		q.Set("by", d.Group)
	}
	if d.Days != 1 {
		q.Set("days", strconv.Itoa(d.Days))
	}
	for k, v := range more {
		q[k] = v
	}
	if len(q) == 0 {
		return "/operator/fraud"
	}
	return "/operator/fraud?" + q.Encode()
}

// fraudTops sums the window's decisions by account, rule, key and action,
// the busiest first.
func fraudTops(rows []domain.FraudHour, names map[string]string) []fraudTop {
	type k struct {
		account, rule, scope, key string
		action                    domain.FraudAction
	}
	sums := map[k]*fraudTop{}
	var order []k
	for _, h := range rows {
		key := k{h.AccountID, h.Rule, h.Scope, h.Key, h.Action}
		t, ok := sums[key]
		if !ok {
			t = &fraudTop{AccountID: h.AccountID, AccountName: names[h.AccountID], Rule: fraudSeriesName("rule", h.Rule, nil),
				Key: hourKeyName(h.Scope, h.Key), Action: h.Action, First: h.Hour, Last: h.Hour}
			sums[key] = t
			order = append(order, key)
		}
		t.Messages += h.Messages
		if h.Hour.Before(t.First) {
			t.First = h.Hour
		}
		if h.Hour.After(t.Last) {
			t.Last = h.Hour
		}
	}
	out := make([]fraudTop, 0, len(order))
	for _, key := range order {
		out = append(out, *sums[key])
	}
	sortTops(out)
	if len(out) > fraudTopRows {
		out = out[:fraudTopRows]
	}
	return out
}

func sortTops(t []fraudTop) {
	sort.SliceStable(t, func(i, j int) bool {
		a, b := t[i], t[j]
		if a.Messages != b.Messages {
			return a.Messages > b.Messages
		}
		if !a.Last.Equal(b.Last) {
			return a.Last.After(b.Last)
		}
		if a.AccountID != b.AccountID {
			return a.AccountID < b.AccountID
		}
		return a.Rule+a.Key < b.Rule+b.Key
	})
}

// decisionText says why the guard stopped a message, with its figures.
func decisionText(d *domain.FraudDecision) string {
	if d == nil {
		return "no decision recorded"
	}
	what := keyName(d.Scope, d.Key)
	count := strconv.FormatInt(d.Count, 10)
	switch d.Rule {
	case domain.RulePerRecipient:
		return "Per recipient: message " + count + " to " + what + " this hour, over the cap of " + strconv.FormatInt(d.Cap, 10)
	case domain.RulePerRange:
		return "Per range: message " + count + " to " + what + " this hour, over the cap of " + strconv.FormatInt(d.Cap, 10)
	case domain.RuleBurst:
		return "Burst: message " + count + " to " + what + " this hour, over " + strconv.FormatFloat(d.Factor, 'g', -1, 64) +
			" × the trailing baseline of " + strconv.FormatFloat(d.Baseline, 'f', 1, 64) + " an hour (" + strconv.FormatInt(d.Cap, 10) + ")"
	}
	return d.Rule + ": " + count + " to " + what + ", cap " + strconv.FormatInt(d.Cap, 10)
}

func (p *Panel) releaseHeld(w http.ResponseWriter, r *http.Request, s *session) {
	p.resolveHeld(w, r, s, p.cfg.Manage.ReleaseHeld, "heldReleased")
}

func (p *Panel) rejectHeld(w http.ResponseWriter, r *http.Request, s *session) {
	p.resolveHeld(w, r, s, p.cfg.Manage.RejectHeld, "heldRejected")
}

// resolveHeld releases or rejects a held message. One that another
// operator (or the 24 hours) resolved first shows the page again with a
// word on it rather than an error page.
func (p *Panel) resolveHeld(w http.ResponseWriter, r *http.Request, s *session, act func(context.Context, manage.Actor, string) (domain.Message, error), done string) {
	if !s.Actor.Can(user.Operator) {
		p.actionError(w, r, s, manage.ErrForbidden)
		return
	}
	_, err := act(r.Context(), s.Actor, r.PathValue("id"))
	if errors.Is(err, manage.ErrNotHeld) {
		p.showFraud(w, r, s, http.StatusConflict, &view{Errors: map[string]string{
			"": "That message is no longer held: another operator released or rejected it, or its 24 hours ran out. The list below is as it stands now."}})
		return
	}
	back := "/operator/fraud?done=" + done
	if s.Account != "" {
		back += "&account=" + url.QueryEscape(s.Account)
	}
	p.finish(w, r, s, err, back)
}
