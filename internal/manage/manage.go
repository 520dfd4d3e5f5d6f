// Package manage holds the actions of the web panel and its management API
// (CONTRACT section 5), once: the JSON API, the HTML pages and the
// operators' command line all call these. Every action takes the acting
// user and checks the role here, on the server, whatever the caller showed
// or hid; refusals are typed errors (ErrForbidden, ErrNotFound, a
// *message.ValidationError naming the field) that each front renders its
// own way. The package never sees HTTP.
package manage

import (
	"context"
	"errors"
	"fmt"
	"time"

	"msgsvc/internal/compliance"
	"msgsvc/internal/domain"
	"msgsvc/internal/ledger"
	"msgsvc/internal/message"
	"msgsvc/internal/ratelimit"
	"msgsvc/internal/store"
	"msgsvc/internal/user"
)

// Errors of the actions besides validation.
var (
	// ErrForbidden: the actor's role does not allow the action, or a user
	// named an account that is not theirs.
	ErrForbidden = errors.New("forbidden")
	// ErrNotFound: no such thing in the account (another account's ids
	// are not found either).
	ErrNotFound = store.ErrNotFound
	// ErrBadCredentials: wrong email or password.
	ErrBadCredentials = errors.New("wrong email or password")
	// ErrInvalidToken: no such session (never issued, or logged out).
	ErrInvalidToken = errors.New("invalid session token")
	// ErrTokenExpired: the session was idle for longer than its lifetime.
	ErrTokenExpired = errors.New("session expired")
)

// Store is what the actions read and write.
type Store interface {
	Account(ctx context.Context, id string) (store.Account, error)
	Accounts(ctx context.Context) ([]store.Account, error)
	Write(ctx context.Context, fn func(tx *store.Tx) error) error

	UserByEmail(ctx context.Context, email string) (store.User, error)
	CreateUser(ctx context.Context, u store.User) error
	SetPassword(ctx context.Context, userID, hash string) error
	CreateSession(ctx context.Context, s store.Session) error
	SessionUser(ctx context.Context, tokenHash string) (store.Session, store.User, error)
	ExtendSession(ctx context.Context, tokenHash string, seen, expires time.Time) error
	DeleteSession(ctx context.Context, tokenHash string) error
	EndSessions(ctx context.Context, userID, keep string) error
	DeleteExpiredSessions(ctx context.Context, userID string, t time.Time) error
	Users(ctx context.Context, accountID string) ([]store.User, error)
	DeleteUser(ctx context.Context, accountID, userID string) error

	Keys(ctx context.Context, accountID string) ([]store.APIKey, error)
	CreateKey(ctx context.Context, k store.APIKey) error
	RevokeKey(ctx context.Context, accountID, keyID string, at time.Time) error

	UpdateAccountSettings(ctx context.Context, accountID string, allowlist []string, rcsFallback bool, waTier int) error
	RotateSecret(ctx context.Context, accountID, next string, at time.Time) error

	Senders(ctx context.Context, accountID string) ([]store.Sender, error)
	AddSender(ctx context.Context, in store.Sender) error
	RemoveSender(ctx context.Context, accountID, id string) error
	senderDecisions

	CreateLimitRequest(ctx context.Context, r store.LimitRequest) error
	LimitRequest(ctx context.Context, id string) (store.LimitRequest, error)
	LimitRequests(ctx context.Context, accountID string) ([]store.LimitRequest, error)
	PendingLimitRequests(ctx context.Context) ([]store.LimitRequest, error)
	DecideLimitRequest(ctx context.Context, d store.LimitRequest) (store.LimitRequest, error)

	SearchMessages(ctx context.Context, f store.MessageFilter) ([]domain.Message, error)
	MessageByID(ctx context.Context, messageID string) (domain.Message, error)
	EventsForMessage(ctx context.Context, accountID, messageID string) ([]store.Event, error)
	MessageAttempts(ctx context.Context, accountID, messageID string) ([]store.Attempt, error)
	AccountEvent(ctx context.Context, accountID, eventID string) (store.Event, error)
	Redeliver(ctx context.Context, accountID, eventID string, now time.Time) error

	compliance.OptOutStore
	SetCompliance(ctx context.Context, accountID string, c store.Compliance) error

	Ledger(ctx context.Context, accountID, before string, limit int) ([]ledger.Entry, error)
	Usage(ctx context.Context, accountID string, env domain.Environment, since time.Time) ([]store.UsageDay, error)
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
	Now       func() time.Time
}

// Service runs the actions.
type Service struct {
	st          Store
	limiter     ratelimit.Inspector
	redelivered func()
	ttl         time.Duration
	gate        *passwordGate
	now         func() time.Time
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
	return &Service{st: cfg.Store, limiter: cfg.Limiter, redelivered: cfg.Redelivered, ttl: cfg.SessionTTL, now: cfg.Now,
		gate: newPasswordGate(cfg.Failures, cfg.PasswordFailuresPerMinute, cfg.HashSlots)}
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
func (s *Service) account(ctx context.Context, a Actor, accountID, need string) (store.Account, error) {
	if !a.Can(need) {
		return store.Account{}, ErrForbidden
	}
	if !a.Operator() {
		if accountID != "" && accountID != a.AccountID {
			return store.Account{}, ErrForbidden
		}
		accountID = a.AccountID
	}
	if accountID == "" {
		return store.Account{}, invalid("account", "is required: operators name the account (?account=acc_…)")
	}
	acct, err := s.st.Account(ctx, accountID)
	if err != nil {
		return acct, fmt.Errorf("account %s: %w", accountID, err)
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
func invalid(field, msg string) *message.ValidationError {
	return &message.ValidationError{Detail: field + " " + msg, Fields: []message.FieldError{{Field: field, Message: msg}}}
}

// problems collects field errors; err is nil when there are none.
type problems struct{ fields []message.FieldError }

func (p *problems) add(field, msg string) {
	p.fields = append(p.fields, message.FieldError{Field: field, Message: msg})
}

func (p *problems) err(detail string) error {
	if len(p.fields) == 0 {
		return nil
	}
	return &message.ValidationError{Detail: detail, Fields: p.fields}
}
