package app

import (
	"context"
	"fmt"
	"strings"
	"time"

	"msgsvc/internal/apikey"
	"msgsvc/internal/domain"
	"msgsvc/internal/id"
	"msgsvc/internal/ledger"
	"msgsvc/internal/store"
	"msgsvc/internal/user"
	"msgsvc/internal/webhook"
)

// Default limits per tier: requests per minute for the tier window; the
// request-type windows start at the contract's defaults for every tier.
var tierRPM = map[string]int{"free": 10, "basic": 30, "pro": 100, "enterprise": 500}

// DefaultLimits returns a tier's starting limits.
func DefaultLimits(tier string) store.Limits {
	return store.Limits{TierRPM: tierRPM[tier], SendRPM: 60, StatusRPM: 2000, MediaRPM: 60}
}

// NewAccount describes an account to create.
type NewAccount struct {
	Name     string
	Tier     string
	Credits  float64
	Currency string
	Country  string
}

// CreateAccount creates an account with a fresh webhook secret and its
// opening credits in the ledger.
func CreateAccount(ctx context.Context, st *store.Store, in NewAccount, now time.Time) (store.Account, error) {
	in.Tier = strings.ToLower(in.Tier)
	if _, ok := tierRPM[in.Tier]; !ok {
		return store.Account{}, fmt.Errorf("tier must be free, basic, pro or enterprise")
	}
	if strings.TrimSpace(in.Name) == "" {
		return store.Account{}, fmt.Errorf("name is required")
	}
	if len(in.Currency) != 3 {
		return store.Account{}, fmt.Errorf("currency must be a 3-letter code")
	}
	if in.Country == "" || len(in.Country) > 3 || strings.Trim(in.Country, "0123456789") != "" {
		return store.Account{}, fmt.Errorf("country must be a calling code such as 1 or 55")
	}
	credits, err := ledger.FromCredits(in.Credits)
	if err != nil || credits < 0 {
		return store.Account{}, fmt.Errorf("credits must be a non-negative amount")
	}
	secret, err := webhook.NewSecret()
	if err != nil {
		return store.Account{}, err
	}
	a := store.Account{ID: id.New(id.Account, now), Name: in.Name, Tier: in.Tier, Currency: strings.ToUpper(in.Currency),
		CountryCode: in.Country, WebhookSecret: secret, Limits: DefaultLimits(in.Tier), WAQualityTier: 1, CreatedAt: now}
	if err := st.CreateAccount(ctx, a); err != nil {
		return a, err
	}
	if credits > 0 {
		if a.Balance, err = addCredits(ctx, st, a.ID, credits, ledger.TopUp, "opening balance", now); err != nil {
			return a, err
		}
	}
	return a, nil
}

// CreateKey makes an API key for an account; the secret is returned once.
func CreateKey(ctx context.Context, st *store.Store, accountID, env string, now time.Time) (apikey.Key, store.APIKey, error) {
	if _, err := st.Account(ctx, accountID); err != nil {
		return apikey.Key{}, store.APIKey{}, fmt.Errorf("account %s: %w", accountID, err)
	}
	k, err := apikey.Generate(env)
	if err != nil {
		return k, store.APIKey{}, err
	}
	rec := store.APIKey{ID: id.New(id.Key, now), AccountID: accountID, Env: domain.Environment(env), Prefix: k.Prefix, Hash: k.Hash, CreatedAt: now}
	return k, rec, st.CreateKey(ctx, rec)
}

// CreateUser adds a panel user; an empty password is generated and returned.
func CreateUser(ctx context.Context, st *store.Store, accountID, email, role, password string, now time.Time) (store.User, string, error) {
	if !user.ValidRole(role) {
		return store.User{}, "", fmt.Errorf("role must be owner, admin, developer or viewer")
	}
	if !strings.Contains(email, "@") {
		return store.User{}, "", fmt.Errorf("email is not valid")
	}
	if _, err := st.Account(ctx, accountID); err != nil {
		return store.User{}, "", fmt.Errorf("account %s: %w", accountID, err)
	}
	if password == "" {
		var err error
		if password, err = user.NewPassword(); err != nil {
			return store.User{}, "", err
		}
	} else if len(password) < 10 {
		return store.User{}, "", fmt.Errorf("password must be at least 10 characters")
	}
	hash, err := user.HashPassword(password)
	if err != nil {
		return store.User{}, "", err
	}
	u := store.User{ID: id.New(id.User, now), AccountID: accountID, Email: email, Role: role, PasswordHash: hash, CreatedAt: now}
	if err := st.CreateUser(ctx, u); err != nil {
		return u, "", fmt.Errorf("create user %s: %w", email, err)
	}
	return u, password, nil
}
