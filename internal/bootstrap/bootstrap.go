// Package bootstrap makes what a node needs before anyone can sign in:
// accounts with their opening credits, API keys and panel users, as the
// operators' command line and the dev installation make them. It also
// opens the node's database the way those commands do.
package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"os"
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
	// Reseller lets the account have children of its own.
	Reseller bool
	// ParentID makes the account a child of that reseller: it takes the
	// parent's currency, and its opening credits are a transfer from the
	// parent rather than new money.
	ParentID string
	// PricePlan is the plan a top-level account sells at; "" is the
	// default plan, if one is set.
	PricePlan string
}

// CreateAccount creates an account with a fresh webhook secret and its
// opening credits in the ledger.
func CreateAccount(ctx context.Context, st *store.Store, in NewAccount, now time.Time) (domain.Account, error) {
	in.Tier = strings.ToLower(in.Tier)
	if in.ParentID != "" {
		parent, err := st.Account(ctx, in.ParentID)
		if err != nil {
			return domain.Account{}, fmt.Errorf("parent %s: %w", in.ParentID, err)
		}
		in.Currency = parent.Currency
	}
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
	if in.PricePlan != "" && in.ParentID != "" {
		return domain.Account{}, fmt.Errorf("a reseller's child is priced by its parent, not by a price plan")
	}
	credits, err := ledger.FromCredits(in.Credits)
	if err != nil || credits < 0 {
		return domain.Account{}, fmt.Errorf("credits must be a non-negative amount")
	}
	if in.ParentID != "" && credits > 0 {
		// Checked first so that a refusal leaves no account behind; the
		// transfer checks again, atomically.
		parent, err := st.Account(ctx, in.ParentID)
		if err != nil {
			return domain.Account{}, fmt.Errorf("parent %s: %w", in.ParentID, err)
		}
		if parent.Balance < credits {
			return domain.Account{}, fmt.Errorf("parent %s has %v credits, which does not cover %v: %w", parent.ID,
				ledger.Credits(parent.Balance), in.Credits, ledger.ErrInsufficientCredits)
		}
	}
	secret, err := webhook.NewSecret()
	if err != nil {
		return domain.Account{}, err
	}
	a := domain.Account{ID: id.New(id.Account, now), Name: in.Name, Tier: in.Tier, Currency: strings.ToUpper(in.Currency),
		CountryCode: in.Country, WebhookSecret: secret, Limits: DefaultLimits(in.Tier), WAQualityTier: 1, ParentID: in.ParentID,
		CreatedAt: now, PricePlanID: in.PricePlan}
	if in.ParentID != "" {
		err = st.CreateChild(ctx, a)
	} else {
		err = st.CreateAccount(ctx, a)
	}
	if errors.Is(err, domain.ErrNotFound) && in.PricePlan != "" {
		return a, fmt.Errorf("no price plan %q (msgsvc plan list): %w", in.PricePlan, err)
	}
	if err != nil {
		return a, treeError(in.ParentID, err)
	}
	if stored, err := st.Account(ctx, a.ID); err == nil { // the plan it started on
		a.PricePlanID, a.PlanPrices, a.PriceTable = stored.PricePlanID, stored.PlanPrices, stored.PriceTable
	}
	if in.Reseller {
		if err := st.SetReseller(ctx, a.ID, true); err != nil {
			return a, treeError(in.ParentID, err)
		}
		a.Reseller = true
	}
	if credits > 0 && in.ParentID != "" {
		if _, a.Balance, err = st.Transfer(ctx, in.ParentID, a.ID, credits, "opening balance", now); err != nil {
			if errors.Is(err, ledger.ErrInsufficientCredits) {
				return a, fmt.Errorf("account %s created, but its parent's balance does not cover %v credits: %w", a.ID, in.Credits, err)
			}
			return a, err
		}
		return a, nil
	}
	if credits > 0 {
		if a.Balance, err = AddCredits(ctx, st, a.ID, credits, ledger.TopUp, "opening balance", now); err != nil {
			return a, err
		}
	}
	return a, nil
}

// treeError says in an operator's words why a tree refused the account.
func treeError(parentID string, err error) error {
	switch {
	case errors.Is(err, domain.ErrNotReseller):
		return fmt.Errorf("parent %s is not a reseller (make it one first): %w", parentID, err)
	case errors.Is(err, domain.ErrTreeTooDeep):
		return fmt.Errorf("accounts stand at most %d levels deep; this one would be deeper: %w", domain.MaxDepth, err)
	}
	return err
}

// CreateKey makes an API key for an account; the secret is returned once.
func CreateKey(ctx context.Context, st *store.Store, accountID, env string, now time.Time) (apikey.Key, domain.APIKey, error) {
	return Console(st, now).CreateKey(ctx, manage.Console, accountID, env, "")
}

// CreateUser adds a panel user (an operator when role is "operator" and
// accountID empty); an empty password is generated and returned.
func CreateUser(ctx context.Context, st *store.Store, accountID, email, role, password string, now time.Time) (domain.User, string, error) {
	return Console(st, now).CreateUser(ctx, manage.Console, manage.NewUser{AccountID: accountID, Email: email, Role: role, Password: password})
}

// Console is the management actions as the command line runs them, at a
// fixed time.
func Console(st *store.Store, now time.Time) *manage.Service {
	return manage.New(manage.Config{Store: st, Now: func() time.Time { return now }})
}

// AddCredits records an operator's top-up or correction in the ledger.
func AddCredits(ctx context.Context, st *store.Store, accountID string, amount int64, kind ledger.Kind, note string, now time.Time) (int64, error) {
	var balance int64
	err := st.Write(ctx, func(tx *store.Tx) error {
		var err error
		balance, err = ledger.Credit(ctx, tx, accountID, amount, kind, note, now)
		return err
	})
	return balance, err
}

// accountReader finds an account by id (domain.ErrNotFound when none).
type accountReader interface {
	Account(ctx context.Context, id string) (domain.Account, error)
}

// AccountExists says whether an account id names an account, for the
// check of the accounts routes are limited to.
func AccountExists(ctx context.Context, st accountReader) func(id string) (bool, error) {
	return func(id string) (bool, error) {
		_, err := st.Account(ctx, id)
		if errors.Is(err, domain.ErrNotFound) {
			return false, nil
		}
		return err == nil, err
	}
}

// OpenStore opens the database, creating it if it does not exist, and
// migrates it: for the commands that make a database (migrate, bench).
func OpenStore(ctx context.Context, dsn string) (*store.Store, error) {
	return OpenStoreWith(ctx, dsn, store.Options{})
}

// OpenStoreWith is OpenStore with the store's options (a measure's own
// clock, say).
func OpenStoreWith(ctx context.Context, dsn string, o store.Options) (*store.Store, error) {
	st, err := store.Open(ctx, dsn, o)
	if err != nil {
		return nil, err
	}
	if err := st.Migrate(ctx); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// OpenExisting is OpenStore for the commands that work on a database and
// must not make one by accident (run from another folder, the default
// ./msgsvc-data/msgsvc.db is not the node's): a SQLite file that does not
// exist is an error naming where to give the right one.
func OpenExisting(ctx context.Context, dsn string) (*store.Store, error) {
	if path, ok := SQLitePath(dsn); ok {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("no database at %s: give the node's database with --db or MSGSVC_DB (or its data directory with --data or MSGSVC_DATA); only dev, serve and migrate create one", path)
		}
	}
	return OpenStore(ctx, dsn)
}

// SQLitePath is the file of a SQLite DSN (a path, sqlite:PATH or a
// file: URI); ok is false for PostgreSQL and in-memory databases.
func SQLitePath(dsn string) (string, bool) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return "", false
	}
	path := strings.TrimPrefix(strings.TrimPrefix(dsn, "sqlite:"), "file:")
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	if path == "" || path == ":memory:" {
		return "", false
	}
	return path, true
}
