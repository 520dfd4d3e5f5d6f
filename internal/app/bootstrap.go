package app

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/apikey"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/manage"
	"github.com/msgsvc/msgsvc/internal/store"
	"github.com/msgsvc/msgsvc/internal/webhook"
)

// DefaultLimits returns a tier's starting limits.
func DefaultLimits(tier string) domain.Limits {
	l, _ := manage.TierLimits(tier)
	return l
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
func CreateAccount(ctx context.Context, st *store.Store, in NewAccount, now time.Time) (domain.Account, error) {
	in.Tier = strings.ToLower(in.Tier)
	if _, ok := manage.TierLimits(in.Tier); !ok {
		return domain.Account{}, fmt.Errorf("tier must be free, basic, pro or enterprise")
	}
	if strings.TrimSpace(in.Name) == "" {
		return domain.Account{}, fmt.Errorf("name is required")
	}
	if len(in.Currency) != 3 {
		return domain.Account{}, fmt.Errorf("currency must be a 3-letter code")
	}
	if in.Country == "" || len(in.Country) > 3 || strings.Trim(in.Country, "0123456789") != "" {
		return domain.Account{}, fmt.Errorf("country must be a calling code such as 1 or 55")
	}
	credits, err := ledger.FromCredits(in.Credits)
	if err != nil || credits < 0 {
		return domain.Account{}, fmt.Errorf("credits must be a non-negative amount")
	}
	secret, err := webhook.NewSecret()
	if err != nil {
		return domain.Account{}, err
	}
	a := domain.Account{ID: id.New(id.Account, now), Name: in.Name, Tier: in.Tier, Currency: strings.ToUpper(in.Currency),
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
func CreateKey(ctx context.Context, st *store.Store, accountID, env string, now time.Time) (apikey.Key, domain.APIKey, error) {
	return console(st, now).CreateKey(ctx, manage.Console, accountID, env, "")
}

// CreateUser adds a panel user (an operator when role is "operator" and
// accountID empty); an empty password is generated and returned.
func CreateUser(ctx context.Context, st *store.Store, accountID, email, role, password string, now time.Time) (domain.User, string, error) {
	return console(st, now).CreateUser(ctx, manage.Console, manage.NewUser{AccountID: accountID, Email: email, Role: role, Password: password})
}

// console is the management actions as the command line runs them, at a
// fixed time.
func console(st *store.Store, now time.Time) *manage.Service {
	return manage.New(manage.Config{Store: st, Now: func() time.Time { return now }})
}
