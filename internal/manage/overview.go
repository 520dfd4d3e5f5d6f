package manage

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/user"
)

// OverviewStore is what the overview pages read: the kept usage counts,
// recent failures and the webhooks that need attention.
type OverviewStore interface {
	UsageByDay(ctx context.Context, q domain.UsageQuery) ([]domain.UsageDelta, error)
	RecentFailures(ctx context.Context, accountID string, env domain.Environment, since time.Time, limit int) ([]domain.Message, error)
	TroubledEvents(ctx context.Context, accountID string, limit int) ([]domain.Event, error)
	TopSpenders(ctx context.Context, fromDay int64, limit int) ([]domain.AccountSpend, error)
	TrafficByDay(ctx context.Context, fromDay int64) ([]domain.AccountDay, error)
}

// attention bounds the failures and webhooks the overview lists.
const attention = 5

// Overview is an account at a glance: its balance and alerts, what it
// sent today and over the last UsageDays days, and what needs attention.
type Overview struct {
	Account domain.Account
	Env     domain.Environment
	Today   UsageSummary
	Recent  UsageSummary // the last UsageDays days, today included
	Since   time.Time    // the first of those days
	// SpendToday is what the live keys were charged today (micro-credits).
	SpendToday int64
	Failures   []domain.Message // failed in the last 24 hours, newest first
	Webhooks   []domain.Event   // given up, gone or being retried, newest first
	// Days are the messages and credits of each of the last UsageDays
	// days, oldest first (a day with none is there, zero).
	Days []DayTotal
}

// DayTotal is one day's messages and credits (micro-credits charged).
type DayTotal struct {
	Day      time.Time
	Messages int64
	Credits  int64
}

// UsageSummary is usage summed over days, in all and per channel.
type UsageSummary struct {
	Total     domain.UsageCount
	ByChannel []ChannelUsage
}

// ChannelUsage is one channel's part of a summary.
type ChannelUsage struct {
	Channel domain.Channel
	domain.UsageCount
}

// DeliveryRatio is the share of messages with a final answer that were
// delivered (or read), in percent; ok is false while none has one.
func (u UsageSummary) DeliveryRatio() (percent float64, ok bool) {
	s := u.Total.Statuses
	reached := s.Of(domain.Delivered) + s.Of(domain.Read)
	if done := reached + s.Of(domain.Failed); done > 0 {
		return float64(reached) * 100 / float64(done), true
	}
	return 0, false
}

func (u *UsageSummary) add(d domain.UsageDelta) {
	u.Total.Add(d.UsageCount)
	i := slices.IndexFunc(u.ByChannel, func(c ChannelUsage) bool { return c.Channel == d.Channel })
	if i < 0 {
		u.ByChannel = append(u.ByChannel, ChannelUsage{Channel: d.Channel})
		i = len(u.ByChannel) - 1
	}
	u.ByChannel[i].Add(d.UsageCount)
}

// Overview reads an account's overview for one environment, from the kept
// usage counts (never a scan of its messages).
func (s *Service) Overview(ctx context.Context, a Actor, accountID string, env domain.Environment) (Overview, error) {
	acct, err := s.account(ctx, a, accountID, user.Viewer)
	if err != nil {
		return Overview{}, err
	}
	now := s.now().UTC()
	today := domain.DayNumber(now)
	out := Overview{Account: acct, Env: env, Since: domain.DayTime(today - (UsageDays - 1))}
	days, err := s.st.UsageByDay(ctx, domain.UsageQuery{AccountID: acct.ID, Env: env, From: today - (UsageDays - 1), To: today})
	if err != nil {
		return Overview{}, err
	}
	out.Days = make([]DayTotal, UsageDays)
	for i := range out.Days {
		out.Days[i].Day = domain.DayTime(today - (UsageDays - 1) + int64(i))
	}
	for _, d := range days {
		if d.Day == today {
			out.Today.add(d)
		}
		out.Recent.add(d)
		if i := d.Day - (today - (UsageDays - 1)); i >= 0 && i < UsageDays {
			out.Days[i].Messages += d.Messages
			out.Days[i].Credits += d.Credits
		}
	}
	for _, u := range []*UsageSummary{&out.Today, &out.Recent} {
		slices.SortFunc(u.ByChannel, func(a, b ChannelUsage) int { return strings.Compare(string(a.Channel), string(b.Channel)) })
	}
	out.SpendToday = out.Today.Total.Credits
	if env != domain.Live {
		live, err := s.st.UsageByDay(ctx, domain.UsageQuery{AccountID: acct.ID, Env: domain.Live, From: today, To: today})
		if err != nil {
			return Overview{}, err
		}
		out.SpendToday = 0
		for _, d := range live {
			out.SpendToday += d.Credits
		}
	}
	if out.Failures, err = s.st.RecentFailures(ctx, acct.ID, env, now.Add(-24*time.Hour), attention); err != nil {
		return Overview{}, err
	}
	if out.Webhooks, err = s.st.TroubledEvents(ctx, acct.ID, attention); err != nil {
		return Overview{}, err
	}
	return out, nil
}

// topSpenders is how many accounts the operators' overview ranks.
const topSpenders = 10

// OperatorOverview is every account at a glance: those that spent the most
// over the last UsageDays days and those below their low-balance alert.
type OperatorOverview struct {
	Since time.Time
	Top   []AccountSpend
	Low   []domain.Account
	// Traffic is each account's live messages and charges per day over
	// the same days, by day then account.
	Traffic []domain.AccountDay
}

// AccountSpend is one account's spend in the operators' overview.
type AccountSpend struct {
	Account domain.Account
	domain.AccountSpend
}

// OperatorOverview reads the operators' overview; accounts is the list
// the operator page has read already.
func (s *Service) OperatorOverview(ctx context.Context, a Actor, accounts []domain.Account) (OperatorOverview, error) {
	if err := operator(a); err != nil {
		return OperatorOverview{}, err
	}
	from := domain.DayNumber(s.now()) - (UsageDays - 1)
	top, err := s.st.TopSpenders(ctx, from, topSpenders)
	if err != nil {
		return OperatorOverview{}, err
	}
	byID := map[string]domain.Account{}
	out := OperatorOverview{Since: domain.DayTime(from)}
	for _, acct := range accounts {
		byID[acct.ID] = acct
		if acct.BelowLowBalance() {
			out.Low = append(out.Low, acct)
		}
	}
	for _, t := range top {
		out.Top = append(out.Top, AccountSpend{Account: byID[t.AccountID], AccountSpend: t})
	}
	if out.Traffic, err = s.st.TrafficByDay(ctx, from); err != nil {
		return OperatorOverview{}, err
	}
	return out, nil
}
