package manage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/msgsvc/msgsvc/internal/apikey"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/twilio/sid"
	"github.com/msgsvc/msgsvc/internal/user"
)

// TwilioStore is what managing Twilio credentials needs from storage.
type TwilioStore interface {
	TwilioCredentials(ctx context.Context, accountID string) ([]domain.TwilioCredential, error)
	CreateTwilioCredential(ctx context.Context, c domain.TwilioCredential) error
	DeleteTwilioCredential(ctx context.Context, accountID, sid string) error
}

// MaxTwilioCredentials caps an account's account SIDs and API keys
// together: each is a login to keep track of and to revoke, and a list the
// panel shows whole.
const MaxTwilioCredentials = 50

// ErrTwilioCredentialLimit: the account has as many Twilio credentials as
// it may; one must be removed before another is made.
type ErrTwilioCredentialLimit struct{ Max int }

func (e *ErrTwilioCredentialLimit) Error() string {
	return "the account has " + strconv.Itoa(e.Max) + " Twilio credentials, the most it may have; remove one first"
}

// NewTwilioCredential is what creating a Twilio credential takes. Without
// APIKey it is an account SID (AC…) of Environment; with it, an API key
// (SK…) acting for AccountSid, one of the account's account SIDs, in its
// environment (Environment may be left out, or must be the same).
type NewTwilioCredential struct {
	Environment string
	APIKey      bool
	AccountSid  string
	Name        string
}

// TwilioCredentials lists an account's account SIDs and API keys, oldest
// first, without their secrets.
func (s *Service) TwilioCredentials(ctx context.Context, a Actor, accountID string) ([]domain.TwilioCredential, error) {
	acct, err := s.account(ctx, a, accountID, user.Developer)
	if err != nil {
		return nil, err
	}
	list, err := s.st.TwilioCredentials(ctx, acct.ID)
	if err != nil {
		return nil, err
	}
	for i := range list {
		list[i].Secret = ""
	}
	return list, nil
}

// TwilioCredential reads one of the account's credentials by SID, without
// its secret; another account's is ErrNotFound.
func (s *Service) TwilioCredential(ctx context.Context, a Actor, accountID, sid string) (domain.TwilioCredential, error) {
	list, err := s.TwilioCredentials(ctx, a, accountID)
	if err != nil {
		return domain.TwilioCredential{}, err
	}
	for _, c := range list {
		if c.Sid == sid {
			return c, nil
		}
	}
	return domain.TwilioCredential{}, ErrNotFound
}

// CreateTwilioCredential makes an account SID with its auth token, or an
// API key with its secret. The secret is in the answer and shown this
// once; it is stored as it is, because callbacks are signed with it.
func (s *Service) CreateTwilioCredential(ctx context.Context, a Actor, accountID string, in NewTwilioCredential) (domain.TwilioCredential, error) {
	acct, err := s.account(ctx, a, accountID, user.Developer)
	if err != nil {
		return domain.TwilioCredential{}, err
	}
	var p problems
	env := in.Environment
	if env != "" || !in.APIKey {
		if env != apikey.Test && env != apikey.Live {
			p.add("environment", "must be test or live")
		}
	}
	name := strings.TrimSpace(in.Name)
	if msg := labelProblem(name, 64); msg != "" {
		p.add("name", msg)
	}
	if in.APIKey && in.AccountSid == "" {
		p.add("accountSid", "is required for an API key: the account SID (AC…) it acts for")
	}
	if !in.APIKey && in.AccountSid != "" {
		p.add("accountSid", "is only for an API key (kind apiKey)")
	}
	if err := p.err("The Twilio credential cannot be made."); err != nil {
		return domain.TwilioCredential{}, err
	}
	existing, err := s.st.TwilioCredentials(ctx, acct.ID)
	if err != nil {
		return domain.TwilioCredential{}, err
	}
	c := domain.TwilioCredential{Kind: domain.TwilioAccountSid, AccountID: acct.ID, Env: domain.Environment(env), Name: name,
		CreatedAt: s.now().UTC()}
	prefix := sid.Account
	if in.APIKey {
		parent, ok := accountSidOf(existing, in.AccountSid)
		if !ok {
			// Another account's SID is refused in the same words as one
			// that does not exist: the answer tells nothing of it.
			return domain.TwilioCredential{}, invalid("accountSid", "is not an account SID (AC…) of this account")
		}
		if env != "" && domain.Environment(env) != parent.Env {
			return domain.TwilioCredential{}, invalid("environment", "must be the environment of the account SID ("+string(parent.Env)+")")
		}
		c.Kind, c.Env, c.Parent, prefix = domain.TwilioAPIKey, parent.Env, parent.Sid, sid.APIKey
	}
	if len(existing) >= MaxTwilioCredentials {
		return domain.TwilioCredential{}, &ErrTwilioCredentialLimit{Max: MaxTwilioCredentials}
	}
	if c.Sid, err = randomHex(prefix); err != nil {
		return domain.TwilioCredential{}, err
	}
	if c.Secret, err = randomHex(""); err != nil {
		return domain.TwilioCredential{}, err
	}
	if err := s.st.CreateTwilioCredential(ctx, c); err != nil {
		return domain.TwilioCredential{}, err
	}
	return c, nil
}

// RemoveTwilioCredential deletes an account SID (and the API keys acting
// for it) or an API key: it stops authenticating at its next request on
// every node. Another account's SID is ErrNotFound.
func (s *Service) RemoveTwilioCredential(ctx context.Context, a Actor, accountID, sid string) error {
	acct, err := s.account(ctx, a, accountID, user.Developer)
	if err != nil {
		return err
	}
	return s.st.DeleteTwilioCredential(ctx, acct.ID, sid)
}

func accountSidOf(list []domain.TwilioCredential, accountSid string) (domain.TwilioCredential, bool) {
	for _, c := range list {
		if c.Sid == accountSid && c.Kind == domain.TwilioAccountSid {
			return c, true
		}
	}
	return domain.TwilioCredential{}, false
}

// randomHex is prefix and 128 random bits as 32 lower-case hex digits: the
// shape of Twilio's SIDs and auth tokens.
func randomHex(prefix string) (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("random twilio sid: %w", err)
	}
	return prefix + hex.EncodeToString(b[:]), nil
}
