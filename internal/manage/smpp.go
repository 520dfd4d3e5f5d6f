package manage

import (
	"context"
	"crypto/rand"
	"errors"
	"strconv"
	"time"

	"github.com/msgsvc/msgsvc/internal/apikey"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/user"
)

// SMPPStore is what managing SMPP users needs from storage.
type SMPPStore interface {
	SMPPUsers(ctx context.Context, accountID string) ([]domain.SMPPUser, error)
	CreateSMPPUser(ctx context.Context, u domain.SMPPUser) error
	RemoveSMPPUser(ctx context.Context, accountID, userID string) error
	SMPPActivity(ctx context.Context, accountID string, now time.Time) (map[string]domain.SMPPActivity, error)
}

// Limits of SMPP users: SMPP 3.4 allows a system_id of 15 characters and a
// password of 8.
const (
	MaxSystemID     = 15
	SMPPPasswordLen = 8
	DefaultMaxBinds = 4
	MaxMaxBinds     = 64
	// DefaultMaxSMPPUsers caps an account's SMPP users: each costs a
	// password hash to make and to bind, so their number is bounded like
	// the hashing itself.
	DefaultMaxSMPPUsers = 20
)

// ErrSMPPUserLimit: the account has as many SMPP users as it may; one must
// be removed before another is made.
type ErrSMPPUserLimit struct{ Max int }

func (e *ErrSMPPUserLimit) Error() string {
	return "the account has " + strconv.Itoa(e.Max) + " SMPP users, the most it may have; remove one first"
}

// NewSMPPUser is what creating an SMPP user takes; SystemID "" and
// MaxBinds 0 choose the defaults.
type NewSMPPUser struct {
	Environment string
	SystemID    string
	MaxBinds    int
}

// SMPPUsers lists an account's SMPP users (never their passwords).
func (s *Service) SMPPUsers(ctx context.Context, a Actor, accountID string) ([]domain.SMPPUser, error) {
	acct, err := s.account(ctx, a, accountID, user.Developer)
	if err != nil {
		return nil, err
	}
	return s.st.SMPPUsers(ctx, acct.ID)
}

// SMPPActivity reads what the account's SMPP users do, by user id: their
// open binds on every node, when each last bound, and their recent
// refusals. Only the account's own users are in it.
func (s *Service) SMPPActivity(ctx context.Context, a Actor, accountID string) (map[string]domain.SMPPActivity, error) {
	acct, err := s.account(ctx, a, accountID, user.Developer)
	if err != nil {
		return nil, err
	}
	return s.st.SMPPActivity(ctx, acct.ID, s.now())
}

// CreateSMPPUser makes an SMPP user and returns its password, shown this
// once: only its hash is kept.
func (s *Service) CreateSMPPUser(ctx context.Context, a Actor, accountID string, in NewSMPPUser) (domain.SMPPUser, string, error) {
	acct, err := s.account(ctx, a, accountID, user.Developer)
	if err != nil {
		return domain.SMPPUser{}, "", err
	}
	var p problems
	if in.Environment != apikey.Test && in.Environment != apikey.Live {
		p.add("environment", "must be test or live")
	}
	if in.SystemID != "" && !validSystemID(in.SystemID) {
		p.add("systemId", "must be 1 to "+strconv.Itoa(MaxSystemID)+" letters, digits, '_', '-' or '.'")
	}
	if in.MaxBinds == 0 {
		in.MaxBinds = DefaultMaxBinds
	}
	if in.MaxBinds < 1 || in.MaxBinds > MaxMaxBinds {
		p.add("maxBinds", "must be from 1 to "+strconv.Itoa(MaxMaxBinds))
	}
	if err := p.err("The SMPP user cannot be made."); err != nil {
		return domain.SMPPUser{}, "", err
	}
	existing, err := s.st.SMPPUsers(ctx, acct.ID)
	if err != nil {
		return domain.SMPPUser{}, "", err
	}
	if len(existing) >= s.maxSMPPUsers {
		return domain.SMPPUser{}, "", &ErrSMPPUserLimit{Max: s.maxSMPPUsers}
	}
	if in.SystemID == "" {
		if in.SystemID, err = randomString("abcdefghijkmnpqrstuvwxyz23456789", 10); err != nil {
			return domain.SMPPUser{}, "", err
		}
		in.SystemID = "smpp" + in.SystemID
	}
	pw, err := randomString("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", SMPPPasswordLen)
	if err != nil {
		return domain.SMPPUser{}, "", err
	}
	hash, err := s.hash(ctx, pw)
	if err != nil {
		return domain.SMPPUser{}, "", err
	}
	now := s.now().UTC()
	u := domain.SMPPUser{ID: id.New(id.SMPPUser, now), AccountID: acct.ID, Env: domain.Environment(in.Environment),
		SystemID: in.SystemID, PasswordHash: hash, MaxBinds: in.MaxBinds, CreatedAt: now}
	if err := s.st.CreateSMPPUser(ctx, u); err != nil {
		if errors.Is(err, domain.ErrSystemIDTaken) {
			return domain.SMPPUser{}, "", invalid("systemId", "is taken; choose another or leave it out for a generated one")
		}
		return domain.SMPPUser{}, "", err
	}
	return u, pw, nil
}

// RemoveSMPPUser deletes an SMPP user; its binds are closed on every node
// (at once on this one through the SMPPRemoved hook). Another account's
// user is ErrNotFound.
func (s *Service) RemoveSMPPUser(ctx context.Context, a Actor, accountID, userID string) error {
	acct, err := s.account(ctx, a, accountID, user.Developer)
	if err != nil {
		return err
	}
	if err := s.st.RemoveSMPPUser(ctx, acct.ID, userID); err != nil {
		return err
	}
	s.smppRemoved(userID)
	return nil
}

func validSystemID(v string) bool {
	if len(v) == 0 || len(v) > MaxSystemID {
		return false
	}
	for _, c := range []byte(v) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
		if !ok {
			return false
		}
	}
	return true
}

// randomString draws n characters of alphabet from a CSPRNG, without bias.
func randomString(alphabet string, n int) (string, error) {
	out := make([]byte, 0, n)
	limit := 256 - 256%len(alphabet)
	buf := make([]byte, 2*n)
	for len(out) < n {
		if _, err := rand.Read(buf); err != nil {
			return "", err
		}
		for _, b := range buf {
			if int(b) < limit && len(out) < n {
				out = append(out, alphabet[int(b)%len(alphabet)])
			}
		}
	}
	return string(out), nil
}
