package domain

import (
	"cmp"
	"slices"
	"time"
)

// UsageKey is what usage is counted by: an account's environment, the UTC
// day a message was accepted, the channel that carries it and the
// recipient's calling code.
type UsageKey struct {
	AccountID string
	Env       Environment
	Day       int64 // days since 1970-01-01 UTC
	Channel   Channel
	Country   string
}

// UsageCount is what was sent under one key: messages, segments and the
// micro-credits charged for them, refunds deducted, and the messages by
// their current status.
type UsageCount struct {
	Messages int64
	Segments int64
	Credits  int64
	Statuses StatusCounts
}

// StatusCounts counts messages by status, in the order of Statuses.
type StatusCounts [6]int64

// Of is the count of one status.
func (c StatusCounts) Of(s Status) int64 {
	for i, x := range Statuses {
		if x == s {
			return c[i]
		}
	}
	return 0
}

func statusIndex(s Status) int {
	for i, x := range Statuses {
		if x == s {
			return i
		}
	}
	return -1
}

// Add adds o to u.
func (u *UsageCount) Add(o UsageCount) {
	u.Messages += o.Messages
	u.Segments += o.Segments
	u.Credits += o.Credits
	for i := range u.Statuses {
		u.Statuses[i] += o.Statuses[i]
	}
}

func (u UsageCount) negated() UsageCount {
	out := UsageCount{Messages: -u.Messages, Segments: -u.Segments, Credits: -u.Credits}
	for i := range u.Statuses {
		out.Statuses[i] = -u.Statuses[i]
	}
	return out
}

// Zero reports whether u counts nothing.
func (u UsageCount) Zero() bool { return u == UsageCount{} }

// UsageDelta changes the usage of one key.
type UsageDelta struct {
	UsageKey
	UsageCount
}

// DayNumber is the UTC day of t as days since 1970-01-01.
func DayNumber(t time.Time) int64 {
	return t.UnixMilli() / int64(24*time.Hour/time.Millisecond)
}

// DayTime is midnight UTC of a day number.
func DayTime(day int64) time.Time {
	return time.UnixMilli(day * int64(24*time.Hour/time.Millisecond)).UTC()
}

// UsageOf is what a message counts for in usage: one message of its
// segments, charged what it was charged and not refunded.
func UsageOf(m *Message) UsageDelta {
	d := UsageDelta{UsageKey: UsageKey{AccountID: m.AccountID, Env: m.Env, Day: DayNumber(m.CreatedAt), Channel: m.Channel,
		Country: m.CountryCode}, UsageCount: UsageCount{Messages: 1, Segments: int64(m.Segments), Credits: m.Charged}}
	if i := statusIndex(m.Status); i >= 0 {
		d.Statuses[i] = 1
	}
	return d
}

// UsageChange is the change to usage that turning before into after
// makes (a new status, a refund that lowers the credits, an RCS message
// that fell back to SMS and moves to the SMS row): nothing when neither
// counts differently.
func UsageChange(before, after *Message) []UsageDelta {
	b, a := UsageOf(before), UsageOf(after)
	if b == a {
		return nil
	}
	b.UsageCount = b.negated()
	if b.UsageKey == a.UsageKey {
		a.Add(b.UsageCount)
		return []UsageDelta{a}
	}
	return []UsageDelta{b, a}
}

// MergeUsage sums deltas by key, dropping those that cancel out, in the
// order each key first appears.
func MergeUsage(ds []UsageDelta) []UsageDelta {
	out := make([]UsageDelta, 0, len(ds))
	// A group's few deltas are merged by a scan; a map pays off only
	// past a handful of keys.
	const scanUpTo = 16
	var at map[UsageKey]int
	if len(ds) > scanUpTo {
		at = make(map[UsageKey]int, len(ds))
	}
	for _, d := range ds {
		i := -1
		if at == nil {
			i = slices.IndexFunc(out, func(o UsageDelta) bool { return o.UsageKey == d.UsageKey })
		} else if j, ok := at[d.UsageKey]; ok {
			i = j
		}
		if i >= 0 {
			out[i].Add(d.UsageCount)
			continue
		}
		if at != nil {
			at[d.UsageKey] = len(out)
		}
		out = append(out, d)
	}
	kept := out[:0]
	for _, d := range out {
		if !d.Zero() {
			kept = append(kept, d)
		}
	}
	return kept
}

// UsageRow is one line of a usage report: a period (a day "2026-11-25"
// or a month "2026-11"), a channel and a calling code.
type UsageRow struct {
	Period  string
	Channel Channel
	Country string
	UsageCount
}

// Alerts are an account's thresholds in micro-credits; nil turns one off.
type Alerts struct {
	LowBalance *int64 // balance.low when a debit leaves less
	DailySpend *int64 // spend.daily when a UTC day's charges reach it
}

// Account alert events.
const (
	EventBalanceLow = "balance.low"
	EventSpendDaily = "spend.daily"
)

// UsageQuery asks for an account environment's usage between two UTC days
// (both included), optionally of one channel.
type UsageQuery struct {
	AccountID string
	Env       Environment
	From, To  int64 // day numbers (DayNumber)
	Channel   Channel
}

// UsageReport turns usage per day, oldest first, into report rows per day
// ("2026-11-25") or per month ("2026-11"), each period's rows by channel
// and calling code.
func UsageReport(days []UsageDelta, byMonth bool) []UsageRow {
	out := []UsageRow{}
	at := map[UsageRow]int{} // the row's key, counts zeroed
	for _, d := range days {
		t := DayTime(d.Day)
		k := UsageRow{Period: t.Format(time.DateOnly), Channel: d.Channel, Country: d.Country}
		if byMonth {
			k.Period = t.Format("2006-01")
		}
		if i, ok := at[k]; ok {
			out[i].Add(d.UsageCount)
			continue
		}
		at[k] = len(out)
		k.UsageCount = d.UsageCount
		out = append(out, k)
	}
	slices.SortStableFunc(out, func(a, b UsageRow) int {
		return cmp.Or(cmp.Compare(a.Period, b.Period), cmp.Compare(a.Channel, b.Channel), cmp.Compare(a.Country, b.Country))
	})
	return out
}

// AccountSpend is what one account's live keys sent and were charged over
// some days.
type AccountSpend struct {
	AccountID string
	Messages  int64
	Credits   int64
}

// AccountDay is one account's messages and charges on one day (a day
// number, DayNumber).
type AccountDay struct {
	Day int64
	AccountSpend
}

// BelowLowBalance reports whether the account's balance is under its
// low-balance alert.
func (a Account) BelowLowBalance() bool {
	return a.Alerts.LowBalance != nil && a.Balance < *a.Alerts.LowBalance
}
