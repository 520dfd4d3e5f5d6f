package fraud

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
)

// check is one group's counting: its distinct counters, and for each
// message looked at which counters are its own.
type check struct {
	hour   int64
	rules  []domain.FraudRules // by send
	counts []Count
	// index finds a counter by name once the group has more than
	// smallGroup; a node's groups hold one or two sends, whose few
	// counters a scan finds for less than hashing their names.
	index map[counterKey]int
	items []item
	// The range and country counters a burst rule looks at, their names
	// for the guard's baselines and their baselines (by burst position);
	// burstAt is each counter's burst position, -1 for none.
	burstKeys   []int
	burstNames  []counterKey
	burstFactor []float64
	burstAt     []int
	baseline    []float64
}

// smallGroup is how many counters a group finds by a scan.
const smallGroup = 16

// counterKey names a counter within a group.
type counterKey struct {
	acct       string
	env        domain.Environment
	scope, key string
	hour       int64
}

// item is one message looked at: its send and place, and its counters
// (-1: not counted for that scope).
type item struct {
	send, msg         int
	rcpt, rng, ctry   int
	rngBurst, ctBurst int // burst positions, -1 when no burst rule
}

func (c *check) add(si, mi int, m *domain.Message) {
	r := &c.rules[si]
	it := item{send: si, msg: mi, rcpt: -1, rng: -1, ctry: -1, rngBurst: -1, ctBurst: -1}
	acct := c.account(si, m)
	// A message counts in the hour it was accepted, which is also the
	// hour its id names: the counts can be taken again from the messages.
	hour := c.hour
	if !m.CreatedAt.IsZero() {
		hour = m.CreatedAt.Unix() / 3600
	}
	if r.PerRecipientHourly != nil {
		it.rcpt = c.counter(acct, m.Env, domain.ScopeRecipient, m.To, hour)
	}
	if r.PerRangeHourly != nil || r.BurstFactor != nil {
		it.rng = c.counter(acct, m.Env, domain.ScopeRange, domain.RangeOf(m.To), hour)
	}
	if r.BurstFactor != nil {
		it.ctry = c.counter(acct, m.Env, domain.ScopeCountry, m.CountryCode, hour)
		it.rngBurst, it.ctBurst = c.burst(it.rng, *r.BurstFactor), c.burst(it.ctry, *r.BurstFactor)
	}
	c.items = append(c.items, it)
}

func (c *check) account(_ int, m *domain.Message) string { return m.AccountID }

// counter is the index of a counter of this hour, added when new; each
// message adds one to it.
func (c *check) counter(acct string, env domain.Environment, scope, key string, hour int64) int {
	i := c.find(acct, env, scope, key, hour)
	if i < 0 {
		i = len(c.counts)
		c.counts = append(c.counts, Count{AccountID: acct, Env: env, Scope: scope, Key: key, Hour: hour})
		c.burstAt = append(c.burstAt, -1)
		switch {
		case c.index != nil:
			c.index[counterKey{acct, env, scope, key, hour}] = i
		case len(c.counts) > smallGroup:
			c.index = make(map[counterKey]int, 2*len(c.counts))
			for j, cn := range c.counts {
				c.index[counterKey{cn.AccountID, cn.Env, cn.Scope, cn.Key, cn.Hour}] = j
			}
		}
	}
	c.counts[i].N++
	return i
}

// find is the index of a counter, -1 when the group has none yet.
func (c *check) find(acct string, env domain.Environment, scope, key string, hour int64) int {
	if c.index != nil {
		if i, ok := c.index[counterKey{acct, env, scope, key, hour}]; ok {
			return i
		}
		return -1
	}
	for i := range c.counts {
		cn := &c.counts[i]
		if cn.Key == key && cn.Scope == scope && cn.AccountID == acct && cn.Hour == hour && cn.Env == env {
			return i
		}
	}
	return -1
}

// burst is the burst position of counter k (under factor f), added when
// new.
func (c *check) burst(k int, f float64) int {
	if b := c.burstAt[k]; b >= 0 {
		return b
	}
	if cap(c.burstKeys) == 0 {
		n := 2 * max(cap(c.items), 1) // a message's range and country
		c.burstKeys, c.burstNames = make([]int, 0, n), make([]counterKey, 0, n)
		c.burstFactor, c.baseline = make([]float64, 0, n), make([]float64, 0, n)
	}
	b := len(c.burstKeys)
	c.burstAt[k] = b
	cn := c.counts[k]
	c.burstKeys = append(c.burstKeys, k)
	c.burstNames = append(c.burstNames, counterKey{cn.AccountID, cn.Env, cn.Scope, cn.Key, cn.Hour})
	c.burstFactor = append(c.burstFactor, f)
	c.baseline = append(c.baseline, 0)
	return b
}

// decide walks the messages in order against the counts before the group
// (totals less the group's own), counting only those that go out.
func (c *check) decide(ctx context.Context, tx Tx, counters Counters, totals []int64, now time.Time,
	sends []Send) ([]Decision, error) {
	both := make([]int64, 2*len(c.counts))
	running, stopped := both[:len(c.counts)], both[len(c.counts):]
	for k, cn := range c.counts {
		running[k] = totals[k] - cn.N
	}
	var out []Decision
	for _, it := range c.items {
		r := &c.rules[it.send]
		m := &sends[it.send].Messages[it.msg]
		d, ok := c.trip(r, it, running, m)
		keys := [3]int{it.rcpt, it.rng, it.ctry}
		stop := ok && d.Action != domain.FraudAlert
		for _, k := range keys {
			if k < 0 {
				continue
			}
			if stop {
				stopped[k]++
			} else {
				running[k]++
			}
		}
		if ok {
			d.At = now
			out = append(out, Decision{Send: it.send, Message: it.msg, FraudDecision: d})
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	var back []Count
	for k, n := range stopped {
		if n > 0 {
			cn := c.counts[k]
			cn.N = -n
			back = append(back, cn)
		}
	}
	if len(back) > 0 {
		if _, err := counters.AddFraudCounts(ctx, back); err != nil {
			return nil, err
		}
	}
	return out, c.record(ctx, tx, now, sends, out)
}

// trip is the first rule the message breaks, counting it as the next
// message of each of its counters: the recipient's cap, the range's cap,
// a burst of its range, a burst of its country.
func (c *check) trip(r *domain.FraudRules, it item, running []int64, m *domain.Message) (domain.FraudDecision, bool) {
	act := r.ActionOr()
	if it.rcpt >= 0 {
		n := running[it.rcpt] + 1
		if capN := int64(*r.PerRecipientHourly); n > capN {
			return domain.FraudDecision{Rule: domain.RulePerRecipient, Scope: domain.ScopeRecipient, Key: m.To, Count: n,
				Cap: capN, Action: act}, true
		}
	}
	if it.rng >= 0 && r.PerRangeHourly != nil {
		n := running[it.rng] + 1
		if capN := int64(*r.PerRangeHourly); n > capN {
			return domain.FraudDecision{Rule: domain.RulePerRange, Scope: domain.ScopeRange, Key: c.counts[it.rng].Key,
				Count: n, Cap: capN, Action: act}, true
		}
	}
	if r.BurstFactor == nil {
		return domain.FraudDecision{}, false
	}
	f := *r.BurstFactor
	for _, p := range [2][2]int{{it.rng, it.rngBurst}, {it.ctry, it.ctBurst}} {
		k, b := p[0], p[1]
		if k < 0 || b < 0 {
			continue
		}
		n, base := running[k]+1, c.baseline[b]
		if limit := f * base; float64(n) > limit {
			return domain.FraudDecision{Rule: domain.RuleBurst, Scope: c.counts[k].Scope, Key: c.counts[k].Key, Count: n,
				Cap: int64(math.Floor(limit)), Baseline: math.Round(base*100) / 100, Factor: f, Action: act}, true
		}
	}
	return domain.FraudDecision{}, false
}

// record adds the decisions to their hours' rows (by account, rule and
// range, or country for a country's burst) and posts the account's alert
// for each row the group opened: once per rule and key an hour, however
// many messages and nodes.
func (c *check) record(ctx context.Context, tx Tx, now time.Time, sends []Send, ds []Decision) error {
	hour := time.Unix(c.hour*3600, 0).UTC()
	var hs []domain.FraudHour
	var firstDecision []int // hs index → the decision that opened it
	// A group's decisions fall on few rows, most often one: a scan finds
	// the row for less than hashing its name, until there are many.
	type rowName struct{ account, rule, key string }
	var rows map[rowName]int
	for i, d := range ds {
		m := &sends[d.Send].Messages[d.Message]
		key := HourKey(d.FraudDecision)
		name := rowName{m.AccountID, d.Rule, key}
		j, ok := -1, false
		if rows != nil {
			j, ok = rows[name]
		} else {
			j = slices.IndexFunc(hs, func(h domain.FraudHour) bool {
				return h.Key == key && h.Rule == d.Rule && h.AccountID == m.AccountID
			})
			ok = j >= 0
		}
		if !ok {
			j = len(hs)
			hs = append(hs, domain.FraudHour{Hour: hour, AccountID: m.AccountID, Rule: d.Rule, Scope: d.Scope, Key: key,
				Action: d.Action})
			firstDecision = append(firstDecision, i)
			switch {
			case rows != nil:
				rows[name] = j
			case len(hs) > smallGroup:
				rows = make(map[rowName]int, 2*len(hs))
				for r, h := range hs {
					rows[rowName{h.AccountID, h.Rule, h.Key}] = r
				}
			}
		}
		hs[j].Messages++
	}
	fresh, err := tx.MarkFraudHours(ctx, hs)
	if err != nil {
		return err
	}
	var evs []domain.Event
	for j, isNew := range fresh {
		if !isNew {
			continue
		}
		d := ds[firstDecision[j]]
		s := &sends[d.Send]
		m := &s.Messages[d.Message]
		evs = append(evs, domain.Event{ID: id.New(id.Event, now), AccountID: m.AccountID, Env: m.Env,
			Event: domain.EventFraudSuspected, URL: s.Account.WebhookURL, Body: AlertBody(m, hs[j].Key, d.FraudDecision),
			NextAttemptAt: now, CreatedAt: now})
	}
	if len(evs) == 0 {
		return nil
	}
	return tx.InsertEvents(ctx, evs)
}

// HourKey is what a decision's hour row is kept by: the range of the
// number for the recipient and range rules, the range or the country for
// a burst.
func HourKey(d domain.FraudDecision) string {
	if d.Scope == domain.ScopeRecipient {
		return domain.RangeOf(d.Key)
	}
	return d.Key
}

// alertPayload is the fraud.suspected event: the rule, the range or
// country it is about, the figures of the message that tripped it first
// this hour, and what was done.
type alertPayload struct {
	Event     string   `json:"event"`
	AccountID string   `json:"accountId"`
	Rule      string   `json:"rule"`
	Scope     string   `json:"scope"`
	Key       string   `json:"key"`
	Count     int64    `json:"count"`
	Cap       int64    `json:"cap"`
	Baseline  *float64 `json:"baseline"`
	Factor    *float64 `json:"factor"`
	Action    string   `json:"action"`
	MessageID string   `json:"messageId"`
	Timestamp string   `json:"timestamp"`
}

// AlertBody is the body of the fraud.suspected alert.
func AlertBody(m *domain.Message, key string, d domain.FraudDecision) string {
	p := alertPayload{Event: domain.EventFraudSuspected, AccountID: m.AccountID, Rule: d.Rule, Scope: d.Scope, Key: key,
		Count: d.Count, Cap: d.Cap, Action: string(d.Action), MessageID: m.ID, Timestamp: domain.FormatTime(d.At)}
	if d.Rule == domain.RuleBurst {
		p.Baseline, p.Factor = &d.Baseline, &d.Factor
	}
	b, err := json.Marshal(p)
	if err != nil { // plain strings and numbers: cannot fail
		return `{"event":"` + domain.EventFraudSuspected + `","count":` + strconv.FormatInt(d.Count, 10) + `}`
	}
	return string(b)
}

// Apply makes a decision's action on the message at now: block fails it
// with CodeFraudSuspected, charged nothing (its upline is priced by the
// caller afterwards, or cleared here); hold keeps it HELD and not due;
// alert leaves it as it is. The decision is kept on it in every case. A
// blocked message's price is 0: it is charged nothing, and the answer
// and usage show so.
func Apply(m *domain.Message, d domain.FraudDecision, now time.Time) {
	dec := d
	m.Fraud = &dec
	switch d.Action {
	case domain.FraudBlock:
		m.Stamp(domain.Failed, now)
		m.ErrorCode, m.ErrorMessage = domain.CodeFraudSuspected, domain.ErrorText(domain.CodeFraudSuspected)
		m.Charged, m.Credits = 0, 0
		for i := range m.Upline {
			m.Upline[i].Charged = 0
		}
	case domain.FraudHold:
		m.Stamp(domain.Held, now)
	default:
		return
	}
	m.NextAttemptAt, m.LeaseOwner, m.Attempts = time.Time{}, "", 0
}
