// Package manage holds the actions of the web panel and its management API,
// once: the JSON API, the HTML pages and the
// operators' command line all call these. Every action takes the acting
// user and checks the role here, on the server, whatever the caller showed
// or hid; refusals are typed errors (ErrForbidden, ErrNotFound, a
// *domain.ValidationError naming the field) that each front renders its
// own way. The package never sees HTTP.
package manage

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/ratelimit"
	"github.com/msgsvc/msgsvc/internal/user"
)

// Errors of the actions besides validation.
var (
	// ErrForbidden: the actor's role does not allow the action, or a user
	// named an account that is not theirs.
	ErrForbidden = errors.New("forbidden")
	// ErrNotFound: no such thing in the account (another account's ids
	// are not found either).
	ErrNotFound = domain.ErrNotFound
	// ErrBadCredentials: wrong email or password.
	ErrBadCredentials = errors.New("wrong email or password")
	// ErrInvalidToken: no such session (never issued, or logged out).
	ErrInvalidToken = errors.New("invalid session token")
	// ErrTokenExpired: the session was idle for longer than its lifetime.
	ErrTokenExpired = errors.New("session expired")
)

// AccountStore reads accounts, which every area checks its actor against.
type AccountStore interface {
	Account(ctx context.Context, id string) (domain.Account, error)
	Accounts(ctx context.Context) ([]domain.Account, error)
}

// Store is what the actions read and write: one small interface per area,
// each declared in the area's file, so that a test fakes only the area it
// exercises.
type Store interface {
	AccountStore
	UserStore
	KeyStore
	SecurityStore
	SenderStore
	SenderDecisionStore
	LimitStore
	MessageStore
	ReplyStore
	ComplianceStore
	BalanceStore
	AlertStore
	OverviewStore
	SMPPStore
	TwilioStore
	TreeStore
	FraudStore
	PlanStore
	ConsoleStore
}

// Config wires a Service.
type Config struct {
	Store Store
	// Limiter shows the current minute's use of the account's windows
	// (nil: every window shows unused).
	Limiter ratelimit.Inspector
	// Redelivered wakes the webhook deliverer after an event was queued
	// again (nil: it finds the event on its next poll).
	Redelivered func()
	// SessionTTL is how long a session may stay idle (default 12 h).
	SessionTTL time.Duration
	// Failures counts wrong passwords per address and per account, checked
	// before any hashing (nil: only the one-at-a-time rule and the slots).
	Failures ratelimit.Failures
	// PasswordFailuresPerMinute is the budget of each window (default 10).
	PasswordFailuresPerMinute int
	// HashSlots bounds the password checks running at once (0: HashSlots()).
	HashSlots int
	// Slots, when set, are the hashing slots shared with the other fronts
	// that hash passwords (the SMPP server's binds); they replace HashSlots.
	Slots *user.Slots
	// MaxSMPPUsers caps an account's SMPP users (0: DefaultMaxSMPPUsers).
	MaxSMPPUsers int
	// AllowPrivateWebhooks permits http and private addresses for the
	// account webhook, as for callbacks.
	AllowPrivateWebhooks bool
	// Hasher is the cost of the password hashes made (zero:
	// user.Recommended(); tests choose a cheaper one).
	Hasher user.Hasher
	// SMPPRemoved is told of a removed SMPP user, so that this node closes
	// its binds at once (nil: the SMPP server's own check finds it).
	SMPPRemoved func(userID string)
	Now         func() time.Time
	// Routes is the live router operators inspect and simulate (nil: no
	// routes are shown).
	Routes RouteDesk
	// Margins sums messages' prices and costs (nil: Store, when it can).
	Margins MarginStore
	// Held releases and rejects held messages (nil: they cannot be).
	Held HeldDesk
	// ExportPage is how many rows an export reads per query (0:
	// DefaultExportPage).
	ExportPage int
}

// Service runs the actions.
type Service struct {
	st          Store
	limiter     ratelimit.Inspector
	redelivered func()
	ttl         time.Duration
	gate        *passwordGate
	hasher      user.Hasher
	// dummyHash is verified against when the email is unknown, so that a
	// wrong email takes as long as a wrong password and does not tell
	// which emails have users; it is made at the Service's own cost.
	dummyHash func() string
	now       func() time.Time
	routes    RouteDesk
	margins   MarginStore
	// allowPrivate permits http and private webhook addresses.
	allowPrivate bool
	smppRemoved  func(userID string)
	maxSMPPUsers int
	held         HeldDesk
	exportPage   int
}

// New makes a Service.
func New(cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 12 * time.Hour
	}
	if cfg.Redelivered == nil {
		cfg.Redelivered = func() {}
	}
	if cfg.Margins == nil {
		cfg.Margins, _ = cfg.Store.(MarginStore)
	}
	if cfg.SMPPRemoved == nil {
		cfg.SMPPRemoved = func(string) {}
	}
	if cfg.Slots == nil {
		n := cfg.HashSlots
		if n <= 0 {
			n = HashSlots()
		}
		cfg.Slots = user.NewSlots(n)
	}
	if cfg.MaxSMPPUsers <= 0 {
		cfg.MaxSMPPUsers = DefaultMaxSMPPUsers
	}
	if cfg.ExportPage <= 0 {
		cfg.ExportPage = DefaultExportPage
	}
	h := cfg.Hasher
	return &Service{exportPage: cfg.ExportPage, maxSMPPUsers: cfg.MaxSMPPUsers, st: cfg.Store, limiter: cfg.Limiter, redelivered: cfg.Redelivered, ttl: cfg.SessionTTL, now: cfg.Now,
		gate: newPasswordGate(cfg.Failures, cfg.PasswordFailuresPerMinute, cfg.Slots), hasher: h,
		dummyHash: sync.OnceValue(func() string {
			hash, _ := h.Hash("no user has this password")
			return hash
		}), routes: cfg.Routes, margins: cfg.Margins, allowPrivate: cfg.AllowPrivateWebhooks, smppRemoved: cfg.SMPPRemoved, held: cfg.Held}
}

// SessionTTL is the idle lifetime of a session.
func (s *Service) SessionTTL() time.Duration { return s.ttl }

// Actor is who acts: a panel user (of an account, or an operator), or the
// operators' command line (Console).
type Actor struct {
	UserID    string
	Email     string
	Role      string
	AccountID string // "" for operators
	// SessionHash names the session the actor came with ("" for the
	// console): a password change keeps it and ends the others.
	SessionHash string
}

// Console is the operators' command line: whoever runs it holds the
// database already, so it may do everything an operator may.
var Console = Actor{Email: "console", Role: user.Operator}

// Operator reports whether the actor works across all accounts.
func (a Actor) Operator() bool { return a.Role == user.Operator }

// rank orders the roles: each may do what the ones below it may.
var rank = map[string]int{user.Viewer: 1, user.Developer: 2, user.Admin: 3, user.Owner: 4, user.Operator: 5}

// Can reports whether the actor's role reaches role (an operator's reaches
// every role, in every account). The pages use it to show only what the
// actor may do; the actions check it again.
func (a Actor) Can(role string) bool { return rank[a.Role] >= rank[role] && rank[role] > 0 }

// account resolves the account an action works on and checks the actor's
// role against need. Users work on their own account (naming another one
// is forbidden, whether or not it exists); operators name the account.
func (s *Service) account(ctx context.Context, a Actor, accountID, need string) (domain.Account, error) {
	if !a.Can(need) {
		return domain.Account{}, ErrForbidden
	}
	if !a.Operator() {
		if accountID != "" && accountID != a.AccountID {
			return domain.Account{}, ErrForbidden
		}
		accountID = a.AccountID
	}
	if accountID == "" {
		return domain.Account{}, invalid("account", "is required: operators name the account (?account=acc_…)")
	}
	acct, err := s.st.Account(ctx, accountID)
	if err != nil {
		return acct, fmt.Errorf("account %s: %w", accountID, err)
	}
	// A suspended account's own users may do nothing; an operator, or a
	// parent acting on it, still may.
	if !a.Operator() && acct.ID == a.AccountID && acct.Suspended() {
		return domain.Account{}, ErrSuspended
	}
	return acct, nil
}

// operator checks that the actor is an operator.
func operator(a Actor) error {
	if !a.Operator() {
		return ErrForbidden
	}
	return nil
}

// invalid is a validation error on one field.
func invalid(field, msg string) *domain.ValidationError {
	return &domain.ValidationError{Detail: field + " " + msg, Fields: []domain.FieldError{{Field: field, Message: msg}}}
}

// problems collects field errors; err is nil when there are none.
type problems struct{ fields []domain.FieldError }

func (p *problems) add(field, msg string) {
	p.fields = append(p.fields, domain.FieldError{Field: field, Message: msg})
}

func (p *problems) err(detail string) error {
	if len(p.fields) == 0 {
		return nil
	}
	return &domain.ValidationError{Detail: detail, Fields: p.fields}
}
