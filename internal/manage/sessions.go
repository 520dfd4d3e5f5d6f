package manage

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/user"
)

// UserStore is what logging in, sessions and the account's users need from storage.
type UserStore interface {
	UserByEmail(ctx context.Context, email string) (domain.User, error)
	CreateUser(ctx context.Context, u domain.User) error
	SetPassword(ctx context.Context, userID, hash string) error
	CreateSession(ctx context.Context, s domain.Session) error
	SessionUser(ctx context.Context, tokenHash string) (domain.Session, domain.User, error)
	ExtendSession(ctx context.Context, tokenHash string, seen, expires time.Time) error
	DeleteSession(ctx context.Context, tokenHash string) error
	EndSessions(ctx context.Context, userID, keep string) error
	DeleteExpiredSessions(ctx context.Context, userID string, t time.Time) error
	Users(ctx context.Context, accountID string) ([]domain.User, error)
	DeleteUser(ctx context.Context, accountID, userID string) error
}

// Session is a fresh login: the token is shown to the client this once
// and stored only as a hash.
type Session struct {
	Token     string
	ExpiresAt time.Time
	Actor     Actor
}

// touchEvery bounds how often a session's idle expiry is pushed forward:
// a write per request would cost more than the request.
const touchEvery = time.Minute

// Password length bounds: long enough to resist guessing, short enough
// that hashing one costs what it should.
const (
	minPassword = 10
	maxPassword = 256
)

// Login checks an email and password and opens a session.
func (s *Service) Login(ctx context.Context, email, password string) (Session, error) {
	return s.LoginFrom(ctx, "", email, password)
}

// LoginFrom is Login from a client address: wrong passwords are throttled
// per address and per account before any hashing (*ErrThrottled).
func (s *Service) LoginFrom(ctx context.Context, addr, email, password string) (Session, error) {
	email = strings.TrimSpace(email)
	if len(password) > maxPassword {
		return Session{}, ErrBadCredentials // no user has one: not worth hashing
	}
	keys := []gateKey{{"pw-account:" + strings.ToLower(email), 1}}
	if addr != "" {
		keys = append(keys, gateKey{"pw-addr:" + addr, 2})
	}
	u, err := s.st.UserByEmail(ctx, email)
	if err != nil && !errors.Is(err, domain.ErrNotFound) {
		return Session{}, err
	}
	hash := u.PasswordHash
	if err != nil {
		hash = s.dummyHash()
	}
	ok, gerr := s.gate.check(ctx, keys, func() bool {
		ok, _ := user.VerifyPassword(hash, password)
		return ok
	})
	if gerr != nil {
		return Session{}, gerr
	}
	if err != nil || !ok {
		return Session{}, ErrBadCredentials
	}
	token, tokenHash, err := user.NewToken()
	if err != nil {
		return Session{}, err
	}
	now := s.now().UTC()
	exp := now.Add(s.ttl)
	if err := s.st.DeleteExpiredSessions(ctx, u.ID, now); err != nil {
		return Session{}, err
	}
	if err := s.st.CreateSession(ctx, domain.Session{TokenHash: tokenHash, UserID: u.ID, CreatedAt: now, LastSeenAt: now,
		ExpiresAt: exp}); err != nil {
		return Session{}, err
	}
	return Session{Token: token, ExpiresAt: exp, Actor: actorOf(u, tokenHash)}, nil
}

func actorOf(u domain.User, sessionHash string) Actor {
	return Actor{UserID: u.ID, Email: u.Email, Role: u.Role, AccountID: u.AccountID, SessionHash: sessionHash}
}

// Authenticate finds the actor of a session token and slides the
// session's idle expiry. A token never issued or logged out is
// ErrInvalidToken; one idle for longer than the session lifetime is
// ErrTokenExpired.
func (s *Service) Authenticate(ctx context.Context, token string) (Actor, error) {
	if !strings.HasPrefix(token, "sess_") {
		return Actor{}, ErrInvalidToken
	}
	hash := user.TokenHash(token)
	ss, u, err := s.st.SessionUser(ctx, hash)
	if errors.Is(err, domain.ErrNotFound) {
		return Actor{}, ErrInvalidToken
	}
	if err != nil {
		return Actor{}, err
	}
	now := s.now().UTC()
	if !now.Before(ss.ExpiresAt) {
		return Actor{}, ErrTokenExpired
	}
	if now.Sub(ss.LastSeenAt) >= touchEvery {
		if err := s.st.ExtendSession(ctx, hash, now, now.Add(s.ttl)); err != nil {
			return Actor{}, err
		}
	}
	return actorOf(u, hash), nil
}

// Logout ends the session of a token; an unknown token is ErrInvalidToken.
func (s *Service) Logout(ctx context.Context, token string) error {
	if _, err := s.Authenticate(ctx, token); err != nil && !errors.Is(err, ErrTokenExpired) {
		return err
	}
	return s.st.DeleteSession(ctx, user.TokenHash(token))
}

// ChangePassword replaces the actor's own password after checking the
// current one, and ends the actor's other sessions.
func (s *Service) ChangePassword(ctx context.Context, a Actor, current, next string) error {
	if a.UserID == "" {
		return ErrForbidden
	}
	u, err := s.st.UserByEmail(ctx, a.Email)
	if err != nil {
		return err
	}
	if len(current) > maxPassword {
		return invalid("currentPassword", "is not your current password")
	}
	// Wrong current passwords are throttled per user like wrong logins,
	// and take a hashing slot like them.
	ok, err := s.gate.check(ctx, []gateKey{{"pw-change:" + u.ID, 1}}, func() bool {
		ok, _ := user.VerifyPassword(u.PasswordHash, current)
		return ok
	})
	if err != nil {
		return err
	}
	if !ok {
		return invalid("currentPassword", "is not your current password")
	}
	if msg := passwordProblem(next); msg != "" {
		return invalid("newPassword", msg)
	}
	hash, err := s.hash(ctx, next)
	if err != nil {
		return err
	}
	if err := s.st.SetPassword(ctx, u.ID, hash); err != nil {
		return err
	}
	return s.st.EndSessions(ctx, u.ID, a.SessionHash)
}

func passwordProblem(pw string) string {
	if n := len([]rune(pw)); n < minPassword || len(pw) > maxPassword {
		return fmt.Sprintf("must be %d to %d characters", minPassword, maxPassword)
	}
	if strings.IndexFunc(pw, func(r rune) bool { return !invisible(r) }) < 0 {
		return "must not be only spaces or invisible characters"
	}
	return ""
}

// invisible is a character that shows nothing: a space of any kind, or a
// format character (Unicode Cf: zero-width spaces and joiners, the byte
// order mark). A password made only of them looks empty to its owner and
// to anyone watching it typed.
func invisible(r rune) bool { return unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) }

// NewUser describes a user to add.
type NewUser struct {
	AccountID string // "" for an operator
	Email     string
	Role      string // owner, admin, developer, viewer or operator
	Password  string // "" generates one
}

// CreateUser adds a panel user and returns it with its password (the one
// given, or a generated one, shown this once). Owners add users to their
// own account; only operators add operators.
func (s *Service) CreateUser(ctx context.Context, a Actor, in NewUser) (domain.User, string, error) {
	in.Email = strings.ToLower(strings.TrimSpace(in.Email))
	var p problems
	if in.Role == user.Operator {
		if err := operator(a); err != nil {
			return domain.User{}, "", err
		}
		if in.AccountID != "" {
			p.add("account", "must be empty: operators belong to no account")
		}
	} else if !user.ValidRole(in.Role) {
		p.add("role", "must be owner, admin, developer or viewer")
	}
	if at := strings.Index(in.Email, "@"); at < 1 || at == len(in.Email)-1 || len(in.Email) > 254 {
		p.add("email", "is not an email address")
	}
	if in.Password != "" {
		if msg := passwordProblem(in.Password); msg != "" {
			p.add("password", msg)
		}
	}
	if err := p.err("The user is not valid."); err != nil {
		return domain.User{}, "", err
	}
	if in.Role != user.Operator {
		acct, err := s.account(ctx, a, in.AccountID, user.Owner)
		if err != nil {
			return domain.User{}, "", err
		}
		in.AccountID = acct.ID
	}
	// An email has one user in the whole deployment, so a refusal says the
	// email has a user somewhere: owners may learn that only a few times a
	// minute, not walk a list of addresses.
	probeKey := "user-taken:" + in.AccountID
	if !a.Operator() {
		if err := s.gate.window(ctx, probeKey, false); err != nil {
			return domain.User{}, "", err
		}
	}
	password := in.Password
	if password == "" {
		var err error
		if password, err = user.NewPassword(); err != nil {
			return domain.User{}, "", err
		}
	}
	hash, err := s.hash(ctx, password)
	if err != nil {
		return domain.User{}, "", err
	}
	now := s.now().UTC()
	u := domain.User{ID: id.New(id.User, now), AccountID: in.AccountID, Email: in.Email, Role: in.Role, PasswordHash: hash, CreatedAt: now}
	if err := s.st.CreateUser(ctx, u); err != nil {
		if errors.Is(err, domain.ErrConflict) {
			if !a.Operator() {
				_ = s.gate.window(ctx, probeKey, true)
			}
			return u, "", invalid("email", "already has a user (in this account or another), so it cannot be added")
		}
		return u, "", err
	}
	return u, password, nil
}

// Users lists an account's users by email (owners and operators).
func (s *Service) Users(ctx context.Context, a Actor, accountID string) ([]domain.User, error) {
	acct, err := s.account(ctx, a, accountID, user.Owner)
	if err != nil {
		return nil, err
	}
	list, err := s.st.Users(ctx, acct.ID)
	return nonNil(list), err
}

// RemoveUser removes a user of an account and ends their sessions. Nobody
// removes themselves: an account keeps at least the owner acting.
func (s *Service) RemoveUser(ctx context.Context, a Actor, accountID, userID string) error {
	acct, err := s.account(ctx, a, accountID, user.Owner)
	if err != nil {
		return err
	}
	if userID == a.UserID {
		return invalid("id", "is you: another owner can remove you")
	}
	return s.st.DeleteUser(ctx, acct.ID, userID)
}
