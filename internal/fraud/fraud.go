// Package fraud is the fraud guard: the rules of docs/fraud.md applied to
// a group of accepted messages in the transaction that commits them. It
// counts each account's messages by recipient, range and country per UTC
// hour (in the database, or in Redis shared by every node), decides which
// messages a rule stops, and writes each hour's decisions and the
// account's fraud.suspected alert once per rule and key an hour. It
// imports no storage: the transaction and the counters are interfaces
// declared here.
package fraud

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// MinBaseline is the least trailing baseline a burst is measured against
// (messages an hour), so that an account's first messages to a range or a
// country are not all bursts: with factor f, a key trips a burst only past
// f × MinBaseline messages in an hour.
const MinBaseline = 5.0

// BaselineHours is the trailing window of the baseline: the whole UTC
// hours before the current one.
const BaselineHours = 24

// Count is one counter of an account's messages (domain.FraudCount).
type Count = domain.FraudCount

// Counters keep the counts shared by every node. AddFraudCounts adds each
// count's N and returns the totals after, in order; TrailingFraudCounts
// returns each count's total over the hours [Hour-window, Hour) (its N
// ignored). The database's transaction is one (counts committed with the
// messages); Redis is another (pipelined, one round trip per call).
type Counters interface {
	AddFraudCounts(ctx context.Context, cs []Count) ([]int64, error)
	TrailingFraudCounts(ctx context.Context, cs []Count, window int64) ([]int64, error)
}

// Tx is what the guard needs of the group's transaction besides the
// counters: the hour marks of its decisions (MarkFraudHours adds each
// hour's messages to the row of its rule and key and reports which rows
// are new, which is when the account's alert goes out) and the alert
// events.
type Tx interface {
	MarkFraudHours(ctx context.Context, hs []domain.FraudHour) ([]bool, error)
	InsertEvents(ctx context.Context, evs []domain.Event) error
}

// Send is one accepted send as the guard sees it: the account (its
// rules in force, its webhook for the alert) and its messages, which
// Check changes in place.
type Send struct {
	Account  domain.Account
	Messages []domain.Message
}

// Config sets up a Guard.
type Config struct {
	// Counters are shared counters (Redis); nil counts in the group's
	// transaction, which must then implement Counters. When they fail,
	// the transaction's are used for that group (OnError is told).
	Counters Counters
	OnError  func(err error)
	// MinBaseline overrides MinBaseline when above 0.
	MinBaseline float64
}

// Guard decides. It keeps the baselines it read for the current hour
// (past hours do not change), so a key's trailing counts are read once an
// hour per node.
type Guard struct {
	counters    Counters
	onError     func(error)
	minBaseline float64

	mu        sync.Mutex
	hour      int64
	baselines map[counterKey]float64

	checks sync.Pool // of *check, takeCheck
}

// New makes a Guard.
func New(cfg Config) *Guard {
	if cfg.MinBaseline <= 0 {
		cfg.MinBaseline = MinBaseline
	}
	if cfg.OnError == nil {
		cfg.OnError = func(error) {}
	}
	return &Guard{counters: cfg.Counters, onError: cfg.OnError, minBaseline: cfg.MinBaseline, baselines: map[counterKey]float64{}}
}

// ErrNoCounters: the guard has no shared counters and the transaction
// keeps none.
var ErrNoCounters = errors.New("fraud: no counters")

// maxBaselines bounds the baselines kept for one hour.
const maxBaselines = 100_000

// Decision is what the guard decided about one message of a Send.
type Decision struct {
	Send, Message int
	domain.FraudDecision
}

// Check counts the sends' messages and decides, in the group's
// transaction at now, which a rule stops: the decisions come back in
// the order of the messages, for the caller to apply (Apply). Messages
// of accounts whose rules are all off, and trusted numbers, are not
// counted; messages blocked or held are not counted either, so that a
// cap counts the messages that go out and an attack does not raise the
// baseline it is measured against. It writes each hour's decisions and
// the alerts of new ones in tx. Check changes nothing of sends, so a
// group that runs again after a conflict decides afresh.
func (g *Guard) Check(ctx context.Context, tx Tx, now time.Time, sends []Send) ([]Decision, error) {
	n := 0
	for si := range sends {
		n += len(sends[si].Messages)
	}
	c := g.takeCheck(len(sends), n)
	defer g.putCheck(c)
	c.hour = now.Unix() / 3600
	for si := range sends {
		s := &sends[si]
		r := s.Account.FraudRulesOf()
		if !r.Any() {
			continue
		}
		c.rules[si] = r
		for mi := range s.Messages {
			m := &s.Messages[mi]
			if r.IsTrusted(m.To) {
				continue
			}
			c.add(si, mi, m)
		}
	}
	if len(c.items) == 0 {
		return nil, nil
	}
	counters, err := g.countersFor(tx)
	if err != nil {
		return nil, err
	}
	totals, err := counters.AddFraudCounts(ctx, c.counts)
	if err != nil && g.counters != nil && counters == g.counters {
		g.onError(err)
		if counters, err = g.countersFor(txOnly{tx}); err == nil {
			totals, err = counters.AddFraudCounts(ctx, c.counts)
		}
	}
	if err != nil {
		return nil, err
	}
	if err := g.readBaselines(ctx, counters, c, totals); err != nil {
		return nil, err
	}
	return c.decide(ctx, tx, counters, totals, now, sends)
}

// takeCheck is a group's check, reused: a node checks hundreds of small
// groups a second, and each would otherwise make a dozen slices. Room is
// made for n messages: three counters a message (recipient, range,
// country), two of them looked at by a burst rule.
func (g *Guard) takeCheck(sends, n int) *check {
	c, _ := g.checks.Get().(*check)
	if c == nil {
		c = &check{}
	}
	c.rules = slices.Grow(c.rules[:0], sends)[:sends]
	clear(c.rules)
	c.items = slices.Grow(c.items[:0], n)
	c.counts = slices.Grow(c.counts[:0], 3*n)
	c.burstAt = slices.Grow(c.burstAt[:0], 3*n)
	c.index = nil
	c.burstKeys, c.burstNames, c.burstFactor, c.baseline = c.burstKeys[:0], c.burstNames[:0], c.burstFactor[:0], c.baseline[:0]
	return c
}

// putCheck keeps a check for the next group, unless it served a group of
// more than maxKeptCheck messages, whose room it would hold.
func (g *Guard) putCheck(c *check) {
	if cap(c.items) <= maxKeptCheck {
		g.checks.Put(c)
	}
}

const maxKeptCheck = 256

// txOnly hides the guard's shared counters: the transaction's are used.
type txOnly struct{ Tx }

func (g *Guard) countersFor(tx Tx) (Counters, error) {
	if _, only := tx.(txOnly); !only && g.counters != nil {
		return g.counters, nil
	}
	if t, ok := tx.(txOnly); ok {
		tx = t.Tx
	}
	if c, ok := tx.(Counters); ok {
		return c, nil
	}
	return nil, ErrNoCounters
}

// readBaselines finds the trailing baseline of every range and country a
// burst rule looks at: kept from earlier groups this hour, else read. A
// key whose count this hour, the group's included, is within factor ×
// the floor cannot burst whatever its baseline, so it reads none (most
// ranges: ordinary traffic is spread thin); the floor stands for it.
func (g *Guard) readBaselines(ctx context.Context, counters Counters, c *check, totals []int64) error {
	if len(c.burstKeys) == 0 {
		return nil
	}
	g.mu.Lock()
	if g.hour != c.hour || len(g.baselines) > maxBaselines {
		g.hour, g.baselines = c.hour, map[counterKey]float64{}
	}
	var missing []int
	for i, k := range c.burstKeys {
		if float64(totals[k]) <= c.burstFactor[i]*g.minBaseline {
			c.baseline[i] = g.minBaseline
			continue
		}
		b, ok := g.baselines[c.burstNames[i]]
		if ok {
			c.baseline[i] = b
			continue
		}
		missing = append(missing, i)
	}
	g.mu.Unlock()
	if len(missing) == 0 {
		return nil
	}
	ask := make([]Count, len(missing))
	for j, i := range missing {
		ask[j] = c.counts[c.burstKeys[i]]
	}
	sums, err := counters.TrailingFraudCounts(ctx, ask, BaselineHours)
	if err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for j, i := range missing {
		b := max(float64(sums[j])/BaselineHours, g.minBaseline)
		c.baseline[i] = b
		if g.hour == c.hour {
			g.baselines[c.burstNames[i]] = b
		}
	}
	return nil
}

// CodeDestinationNotAllowed is the refusal of a send to a country
// outside the account's allowed countries.
const CodeDestinationNotAllowed = "DESTINATION_NOT_ALLOWED"

// Geo checks a send's recipients (their calling codes, in request order,
// named by path) against the account's allowed countries: a send with any
// recipient outside is refused whole, as a *domain.Refusal naming every
// such recipient and the countries; nothing is written or charged.
func Geo(rules domain.FraudRules, countries []string, path func(i int) string) error {
	if rules.AllowedCountries == nil {
		return nil
	}
	var r *domain.Refusal
	var named []string
	for i, cc := range countries {
		if rules.CountryAllowed(cc) {
			continue
		}
		if r == nil {
			r = &domain.Refusal{Code: CodeDestinationNotAllowed, Err: &domain.DestinationError{Country: cc, Field: path(i)}}
		}
		r.Fields = append(r.Fields, domain.FieldError{Path: path(i), Code: domain.FieldNotAllowed,
			Message: "country " + cc + " is not among the account's allowed destinations"})
		if !slices.Contains(named, cc) {
			named = append(named, cc)
		}
	}
	if r == nil {
		return nil
	}
	r.Detail = "Sending to country " + strings.Join(named, ", ") + " is not allowed for this account; nothing was sent or charged. " +
		"Allowed: " + strings.Join(rules.AllowedCountries, ", ") + "."
	if len(rules.AllowedCountries) == 0 {
		r.Detail = "Sending to country " + strings.Join(named, ", ") + " is not allowed for this account (it may send to no country); nothing was sent or charged."
	}
	return r
}
