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

// Count is one counter of an account's messages: a recipient, a range or a
// country (Scope, Key) of an environment in a UTC hour (Unix hours), and
// the messages to add to it (N).
type Count struct {
	AccountID string
	Env       domain.Environment
	Scope     string
	Key       string
	Hour      int64
	N         int64
}

// Counters keep the counts shared by every node. Add adds each count's N
// and returns the totals after, in order; Trailing returns each count's
// total over the hours [Hour-BaselineHours, Hour) (its N ignored). The
// database's transaction is one (counts committed with the messages);
// Redis is another (pipelined, one round trip per call).
type Counters interface {
	Add(ctx context.Context, cs []Count) ([]int64, error)
	Trailing(ctx context.Context, cs []Count) ([]int64, error)
}

// Tx is what the guard needs of the group's transaction besides the
// counters: the hour marks of its decisions (MarkFraudHour adds n
// messages to the hour's row of a rule and key and reports whether the
// row is new, which is when the alert goes out) and the alert events.
type Tx interface {
	MarkFraudHours(ctx context.Context, hs []domain.FraudHour) ([]bool, error)
	InsertEvents(ctx context.Context, evs []domain.Event) error
}

// Send is one accepted send as the guard sees it: the account (its
// effective rules, its webhook and currency for the alert) and its
// messages, in order.
type Send struct {
	Account  domain.Account
	Rules    domain.FraudRules
	Messages []domain.Message
}

// Config sets up a Guard.
type Config struct {
	// Counters are shared counters (Redis); nil counts in the group's
	// transaction, which must then implement Counters.
	Counters Counters
	// MinBaseline overrides MinBaseline when above 0.
	MinBaseline float64
}

// Guard decides.
type Guard struct {
	counters    Counters
	minBaseline float64
}

// New makes a Guard.
func New(cfg Config) *Guard {
	if cfg.MinBaseline <= 0 {
		cfg.MinBaseline = MinBaseline
	}
	return &Guard{counters: cfg.Counters, minBaseline: cfg.MinBaseline}
}

// ErrNoCounters: the guard has no shared counters and the transaction
// keeps none.
var ErrNoCounters = errors.New("fraud: no counters")

// Check counts the sends' messages and decides, in the group's
// transaction at now: each message a rule stops gets its decision
// (Message.Fraud) and, for block, status FAILED with CodeFraudSuspected
// and nothing charged (Charged and every Upline level 0); for hold,
// status HELD and not due. Messages of accounts whose rules are all off,
// and trusted numbers, are not counted. It returns how many messages it
// stopped or flagged.
func (g *Guard) Check(ctx context.Context, tx Tx, now time.Time, sends []Send) (int, error) {
	return 0, errors.New("fraud: not built yet")
}

// Geo checks a send's recipients against the account's allowed
// countries: the first outside is refused (a *domain.DestinationError
// whose Field is the recipient's domain path, fields[i]).
func Geo(rules domain.FraudRules, numbers, countries, fields []string) error {
	for i, cc := range countries {
		if !rules.CountryAllowed(cc) {
			return &domain.DestinationError{Country: cc, Field: fields[i], Number: numbers[i]}
		}
	}
	return nil
}
