package app

import (
	"context"
	"time"

	"github.com/msgsvc/msgsvc/internal/apikey"
	"github.com/msgsvc/msgsvc/internal/bootstrap"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/manage"
	"github.com/msgsvc/msgsvc/internal/store"
)

// The names below are bootstrap's, kept here for the dev installation and
// for the tests that build a node's accounts with them.

// DefaultLimits returns a tier's starting limits.
func DefaultLimits(tier string) domain.Limits { return bootstrap.DefaultLimits(tier) }

// NewAccount describes an account to create.
type NewAccount = bootstrap.NewAccount

// CreateAccount creates an account with a fresh webhook secret and its
// opening credits in the ledger.
func CreateAccount(ctx context.Context, st *store.Store, in NewAccount, now time.Time) (domain.Account, error) {
	return bootstrap.CreateAccount(ctx, st, in, now)
}

// CreateKey makes an API key for an account; the secret is returned once.
func CreateKey(ctx context.Context, st *store.Store, accountID, env string, now time.Time) (apikey.Key, domain.APIKey, error) {
	return bootstrap.CreateKey(ctx, st, accountID, env, now)
}

// CreateUser adds a panel user (an operator when role is "operator" and
// accountID empty); an empty password is generated and returned.
func CreateUser(ctx context.Context, st *store.Store, accountID, email, role, password string, now time.Time) (domain.User, string, error) {
	return bootstrap.CreateUser(ctx, st, accountID, email, role, password, now)
}

// console is the management actions as the command line runs them, at a
// fixed time.
func console(st *store.Store, now time.Time) *manage.Service { return bootstrap.Console(st, now) }
