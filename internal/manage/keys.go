package manage

import (
	"context"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/msgsvc/msgsvc/internal/apikey"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/user"
)

// KeyStore is what managing API keys needs from storage.
type KeyStore interface {
	Keys(ctx context.Context, accountID string) ([]domain.APIKey, error)
	CreateKey(ctx context.Context, k domain.APIKey) error
	RevokeKey(ctx context.Context, accountID, keyID string, at time.Time) error
}

// KeyAgeWarning is the age after which the panel suggests replacing a key.
const KeyAgeWarning = 90 * 24 * time.Hour

// Keys lists an account's API keys, newest first (never the keys
// themselves: only their prefixes are kept).
func (s *Service) Keys(ctx context.Context, a Actor, accountID string) ([]domain.APIKey, error) {
	acct, err := s.account(ctx, a, accountID, user.Viewer)
	if err != nil {
		return nil, err
	}
	return s.st.Keys(ctx, acct.ID)
}

// CreateKey makes an API key; the full key is in the returned apikey.Key
// and is shown this once.
func (s *Service) CreateKey(ctx context.Context, a Actor, accountID, env, name string) (apikey.Key, domain.APIKey, error) {
	acct, err := s.account(ctx, a, accountID, user.Developer)
	if err != nil {
		return apikey.Key{}, domain.APIKey{}, err
	}
	var p problems
	if env != apikey.Test && env != apikey.Live {
		p.add("environment", "must be test or live")
	}
	name = strings.TrimSpace(name)
	if msg := labelProblem(name, 64); msg != "" {
		p.add("name", msg)
	}
	if err := p.err("The key cannot be made."); err != nil {
		return apikey.Key{}, domain.APIKey{}, err
	}
	k, err := apikey.Generate(env)
	if err != nil {
		return k, domain.APIKey{}, err
	}
	now := s.now().UTC()
	rec := domain.APIKey{ID: id.New(id.Key, now), AccountID: acct.ID, Env: domain.Environment(env), Prefix: k.Prefix, Hash: k.Hash,
		Name: name, CreatedAt: now}
	return k, rec, s.st.CreateKey(ctx, rec)
}

// RevokeKey revokes a key: storage refuses it from its very next request.
// A key already revoked, or another account's, is ErrNotFound.
func (s *Service) RevokeKey(ctx context.Context, a Actor, accountID, keyID string) error {
	acct, err := s.account(ctx, a, accountID, user.Developer)
	if err != nil {
		return err
	}
	return s.st.RevokeKey(ctx, acct.ID, keyID, s.now().UTC())
}

// labelProblem checks a short free-text label: at most max characters, no
// control characters.
func labelProblem(v string, max int) string {
	if len([]rune(v)) > max {
		return "must be at most " + strconv.Itoa(max) + " characters"
	}
	if strings.IndexFunc(v, unicode.IsControl) >= 0 {
		return "must not contain control characters"
	}
	return ""
}
