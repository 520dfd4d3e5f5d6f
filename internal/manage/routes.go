package manage

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/phone"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/user"
)

// RouteDesk is the live router as operators inspect it (provider.Router).
type RouteDesk interface {
	ExplainFor(m *domain.Message, usable func(sender string) bool) provider.Decision
	Describe() []provider.RouteInfo
	Currency() string
}

// MarginStore sums what messages paid and cost.
type MarginStore interface {
	Margins(ctx context.Context, from, to time.Time, groupBy string) ([]domain.MarginRow, error)
}

// Routes lists the configured routes and their providers' state.
func (s *Service) Routes(a Actor) ([]provider.RouteInfo, string, error) {
	if err := operator(a); err != nil {
		return nil, "", err
	}
	if s.routes == nil {
		return []provider.RouteInfo{}, "", nil
	}
	return s.routes.Describe(), s.routes.Currency(), nil
}

// Simulation asks where a live message would go now.
type Simulation struct {
	To, Type, Account, From string
}

// Simulated is a simulation's answer: the decision and the price it was
// judged against (micro-credits of the account's currency).
type Simulated struct {
	Decision provider.Decision
	Price    int64
}

// SimulateRoute takes the decision a live send of one SMS segment (or one
// message: a WhatsApp template opening a conversation, an RCS message)
// would take now, changing nothing.
func (s *Service) SimulateRoute(ctx context.Context, a Actor, q Simulation) (Simulated, error) {
	if err := operator(a); err != nil {
		return Simulated{}, err
	}
	var p problems
	n, err := phone.Parse(q.To)
	if err != nil {
		p.add("to", err.Error())
	}
	ch, err := domain.ParseChannel(q.Type)
	if err != nil {
		p.add("type", "must be SMS, WHATSAPP or RCS")
	}
	if q.Account == "" {
		p.add("account", "is required: the account whose send is simulated")
	}
	if err := p.err("the simulated send is not valid"); err != nil {
		return Simulated{}, err
	}
	acct, err := s.st.Account(ctx, q.Account)
	if err != nil {
		return Simulated{}, fmt.Errorf("account %s: %w", q.Account, err)
	}
	prices, err := acct.PriceList()
	if err != nil {
		return Simulated{}, fmt.Errorf("account %s: %w", acct.ID, err)
	}
	var price int64
	switch ch {
	case domain.SMS:
		price = prices.SMS(n.CountryCode, acct.CountryCode, 1)
	case domain.WhatsApp:
		price = prices.WhatsApp(n.CountryCode, acct.CountryCode, true)
	default:
		price = prices.RCS(n.CountryCode, acct.CountryCode)
	}
	if s.routes == nil {
		return Simulated{Price: price}, nil
	}
	m := &domain.Message{Env: domain.Live, AccountID: acct.ID, To: n.Digits, CountryCode: n.CountryCode, From: q.From,
		Type: ch, Channel: ch, Segments: 1, Credits: price}
	var lookupErr error
	d := s.routes.ExplainFor(m, func(sender string) bool {
		who, err := s.st.SenderOwners(ctx, ch, domain.RouteSenderKey(sender))
		if err != nil {
			lookupErr = cmp.Or(lookupErr, err)
			return false
		}
		return domain.MayUseRouteSender(who, acct.ID)
	})
	if lookupErr != nil {
		return Simulated{}, fmt.Errorf("who holds a route's sender: %w", lookupErr)
	}
	return Simulated{Decision: d, Price: price}, nil
}

// MarginQuery asks for the margins report.
type MarginQuery struct {
	From, To, GroupBy string // YYYY-MM-DD, inclusive; provider|account|country|day
	// Account asks for a reseller's margin per child (groupBy account):
	// a reseller's users get their own without naming it, and may name an
	// account below theirs; operators name any reseller.
	Account string
}

// MarginReport is the margins report; grouped by day, the keys are
// YYYY-MM-DD.
type MarginReport struct {
	Rows     []domain.MarginRow
	Currency string
}

// Margins sums live messages a provider took, by provider, account,
// country or day, over a range of UTC days (default the last 30).
func (s *Service) Margins(ctx context.Context, a Actor, q MarginQuery) (MarginReport, error) {
	var reseller domain.Account
	if !a.Operator() || q.Account != "" {
		acct, _, err := s.reach(ctx, a, q.Account, user.Viewer)
		if err != nil {
			return MarginReport{}, err
		}
		if !acct.Reseller {
			return MarginReport{}, ErrForbidden
		}
		reseller = acct
	}
	var p problems
	today := s.now().UTC().Truncate(24 * time.Hour)
	from, to := today.AddDate(0, 0, -29), today
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
	group := strings.ToLower(cmpOr(q.GroupBy, "provider"))
	if reseller.ID != "" {
		if group = strings.ToLower(cmpOr(q.GroupBy, "account")); group != "account" {
			p.add("groupBy", "must be account for a reseller's margins (its margin per child)")
		}
	} else if !slices.Contains(domain.MarginGroups, group) {
		p.add("groupBy", "must be provider, account, country or day")
	}
	if to.Before(from) {
		p.add("to", "must not be before from")
	} else if to.Sub(from) > 366*24*time.Hour {
		p.add("to", "is more than 366 days after from")
	}
	if err := p.err("the report's range or grouping is not valid"); err != nil {
		return MarginReport{}, err
	}
	if reseller.ID != "" {
		rows, err := s.st.ResellerMargins(ctx, reseller.ID, from, to)
		return MarginReport{Rows: nonNil(rows), Currency: reseller.Currency}, err
	}
	var rows []domain.MarginRow
	var err error
	if s.margins != nil {
		rows, err = s.margins.Margins(ctx, from, to, group)
	}
	if err != nil {
		return MarginReport{}, err
	}
	if group == "day" {
		for i := range rows {
			var d int64
			_, _ = fmt.Sscan(rows[i].Key, &d)
			rows[i].Key = time.Unix(d*86400, 0).UTC().Format(time.DateOnly)
		}
	}
	cur := ""
	if s.routes != nil {
		cur = s.routes.Currency()
	}
	return MarginReport{Rows: rows, Currency: cur}, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
