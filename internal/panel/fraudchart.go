package panel

import (
	"sort"
	"strconv"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// The fraud guard's chart: the messages its rules stopped or flagged per
// hour, stacked by rule, by account or by what was counted (a range, a
// number or a country), drawn as SVG on the server like the usage chart.
// Accounts and keys beyond the busiest few are summed as "other", so the
// colours stay few enough to tell apart.

// fraudGroups are the ways the chart stacks its bars.
var fraudGroups = []struct{ Value, Name string }{{"rule", "Rule"}, {"account", "Account"}, {"key", "Range or number"}}

// fraudSeries is the most series the chart draws; the rest are "other".
const fraudSeries = 5

// fraudRuleNames name the rules in the legend, in stacking order.
var fraudRuleNames = []struct{ Rule, Name string }{
	{domain.RulePerRecipient, "Per recipient"}, {domain.RulePerRange, "Per range"}, {domain.RuleBurst, "Burst"},
}

// fraudChart lays out the decisions of hours hours from since (a whole
// hour), stacked by group ("rule", "account" or "key"); names give
// accounts' names.
func fraudChart(rows []domain.FraudHour, since time.Time, hours int, group string, names map[string]string) chart {
	key := func(h domain.FraudHour) string {
		switch group {
		case "account":
			return h.AccountID
		case "key":
			return hourKeyName(h.Scope, h.Key)
		}
		return h.Rule
	}
	// The series: the rules in their order, or the busiest accounts or
	// keys over the window (ties by name, so the order is stable).
	totals := map[string]int{}
	for _, h := range rows {
		if i := hourIndex(h.Hour, since); i >= 0 && i < hours {
			totals[key(h)] += int(h.Messages)
		}
	}
	var series []string
	if group == "rule" || group == "" {
		for _, r := range fraudRuleNames {
			series = append(series, r.Rule)
		}
	} else {
		for k := range totals {
			series = append(series, k)
		}
		sort.Slice(series, func(i, j int) bool {
			a, b := totals[series[i]], totals[series[j]]
			return a > b || a == b && series[i] < series[j]
		})
	}
	other := ""
	if len(series) > fraudSeries {
		series, other = series[:fraudSeries], "other"
	}
	index := map[string]int{}
	for i, s := range series {
		index[s] = i
	}
	n := len(series)
	if other != "" {
		n++
	}
	label := func(si int) string {
		if si >= len(series) {
			return "Other"
		}
		return fraudSeriesName(group, series[si], names)
	}
	in := make([]chartInput, n)
	for si := range in {
		in[si] = chartInput{Name: label(si), Class: "s" + strconv.Itoa(si), Values: make([]float64, hours)}
	}
	total := 0
	for _, h := range rows {
		i := hourIndex(h.Hour, since)
		if i < 0 || i >= hours {
			continue
		}
		si, ok := index[key(h)]
		if !ok {
			si = n - 1 // "other" (a rule unknown to this build included)
			if other == "" {
				continue
			}
		}
		in[si].Values[i] += float64(h.Messages)
		total += int(h.Messages)
	}
	slots := make([]string, hours)
	for i := range slots {
		slots[i] = since.Add(time.Duration(i) * time.Hour).Format("Jan 2 15:04")
	}
	sum := strconv.Itoa(total) + " messages stopped or flagged in the last " + plural(hours, "hour")
	c := drawChart(chartSpec{ID: "fraud", Title: "Fraud guard decisions per hour: " + sum, Slots: slots,
		LabelEvery: max(1, hours/6), Series: in, Format: wholeOf, Whole: true, Unit: ""})
	c.Summary = sum
	return c
}

func hourIndex(h, since time.Time) int {
	d := h.Sub(since)
	if d < 0 {
		return -1
	}
	return int(d / time.Hour)
}

// fraudSeriesName names a series of the chart.
func fraudSeriesName(group, key string, names map[string]string) string {
	switch group {
	case "account":
		if n := names[key]; n != "" {
			return n
		}
		return key
	case "key":
		return key
	}
	for _, r := range fraudRuleNames {
		if r.Rule == key {
			return r.Name
		}
	}
	return key
}

// keyName writes what a rule counted as people read it: a country as its
// calling code, a range with the digits it leaves out.
func keyName(scope, key string) string {
	switch scope {
	case domain.ScopeCountry:
		return "+" + key + " (country)"
	case domain.ScopeRange:
		return "+" + key + "xxx"
	case domain.ScopeRecipient:
		return "+" + key
	}
	return key
}

// hourKeyName names the key of an hour's decisions: the guard keeps a
// recipient rule's hours by the number's range, so that the chart and the
// table sum a range's numbers (and name no customer's number).
func hourKeyName(scope, key string) string {
	if scope == domain.ScopeRecipient {
		scope = domain.ScopeRange
	}
	return keyName(scope, key)
}
