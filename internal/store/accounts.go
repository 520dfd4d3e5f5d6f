package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"strings"
	"time"
)

var accounts = newTable("accounts", func(a *domain.Account, c cols) cols {
	return c.add(textCol("id", &a.ID), textCol("name", &a.Name), textCol("tier", &a.Tier),
		textCol("currency", &a.Currency), textCol("country_code", &a.CountryCode), int64Col("balance", &a.Balance),
		timeCol("balance_updated_at", &a.BalanceUpdatedAt), textCol("webhook_secret", &a.WebhookSecret),
		textCol("webhook_secret_prev", &a.WebhookSecretPrev), msCol("secret_rotated_at", &a.SecretRotatedAt),
		intCol("tier_rpm", &a.Limits.TierRPM), intCol("send_rpm", &a.Limits.SendRPM),
		intCol("status_rpm", &a.Limits.StatusRPM), intCol("media_rpm", &a.Limits.MediaRPM),
		intCol("wa_quality_tier", &a.WAQualityTier), boolCol("rcs_fallback", &a.RCSFallback),
		listCol("ip_allowlist", &a.IPAllowlist), pricesCol("prices", a), jsonCol("senders", &a.Senders),
		timeCol("created_at", &a.CreatedAt), textCol("quiet_hours", &a.Compliance.QuietHours),
		intCol("retention_days", &a.Compliance.RetentionDays), textCol("opt_out_reply", &a.Compliance.OptOutReply),
		textCol("opt_in_reply", &a.Compliance.OptInReply), textCol("webhook_url", &a.WebhookURL),
		nullInt64Col("alert_low_balance", &a.Alerts.LowBalance),
		nullInt64Col("alert_daily_spend", &a.Alerts.DailySpend), textCol("parent_id", &a.ParentID),
		boolCol("reseller", &a.Reseller), enumCol("billing", &a.Billing), msCol("suspended_at", &a.SuspendedAt),
		textCol("suspended_by", &a.SuspendedBy), fraudCol("fraud", a),
		textCol("price_plan_id", &a.PricePlanID), planPricesCol("plan_prices", a))
})

// CreateAccount inserts a new top-level account with a zero balance;
// opening credits go through the ledger (ledger.Credit) so that it
// explains them. It starts on a.PricePlanID, or when that is "" on the
// default plan if there is one: an unknown plan is domain.ErrNotFound.
func (s *Store) CreateAccount(ctx context.Context, a domain.Account) error {
	a.Balance, a.BalanceUpdatedAt = 0, a.CreatedAt
	return s.Write(ctx, func(tx *Tx) error {
		plan, err := tx.lockPlan(ctx, a.PricePlanID)
		if err != nil {
			return err
		}
		a.PricePlanID, a.PlanPrices = plan.ID, plan.Prices
		if _, err := tx.exec(ctx, accounts.insert(s), accounts.args(&a, nil)...); err != nil {
			return fmt.Errorf("create account: %w", err)
		}
		return nil
	})
}

// Account reads one account.
func (s *Store) Account(ctx context.Context, id string) (domain.Account, error) {
	return accounts.scan(s.rqueryRow(ctx, `SELECT `+s.accountList("a")+` FROM accounts a WHERE a.id = $1`, id))
}

// Accounts lists every account, oldest first (operators' tools).
func (s *Store) Accounts(ctx context.Context) ([]domain.Account, error) {
	return accounts.scanAll(s.rquery(ctx, `SELECT `+s.accountList("a")+` FROM accounts a ORDER BY a.created_at, a.id`))
}

// SetLimits replaces an account's rate limits.
func (s *Store) SetLimits(ctx context.Context, accountID string, l domain.Limits) error {
	res, err := s.wexec(ctx, `UPDATE accounts SET tier_rpm = $2, send_rpm = $3, status_rpm = $4, media_rpm = $5
		WHERE id = $1`, accountID, l.TierRPM, l.SendRPM, l.StatusRPM, l.MediaRPM)
	return affectedOne(res, err, "set limits")
}

// UpdateAccountSettings replaces the settings an owner can change.
func (s *Store) UpdateAccountSettings(ctx context.Context, accountID string, allowlist []string, rcsFallback bool, waTier int) error {
	res, err := s.wexec(ctx, `UPDATE accounts SET ip_allowlist = $2, rcs_fallback = $3, wa_quality_tier = $4 WHERE id = $1`,
		accountID, strings.Join(allowlist, ","), boolInt(rcsFallback), waTier)
	return affectedOne(res, err, "update account")
}

// SetCompliance replaces an account's compliance settings.
func (s *Store) SetCompliance(ctx context.Context, accountID string, c domain.Compliance) error {
	res, err := s.wexec(ctx, `UPDATE accounts SET quiet_hours = $2, retention_days = $3, opt_out_reply = $4, opt_in_reply = $5
		WHERE id = $1`, accountID, c.QuietHours, c.RetentionDays, c.OptOutReply, c.OptInReply)
	return affectedOne(res, err, "set compliance settings")
}

// RetentionAccounts maps every account that keeps personal data for a
// limited time to its number of days.
func (s *Store) RetentionAccounts(ctx context.Context) (map[string]int, error) {
	out := map[string]int{}
	var id string
	var days int
	err := rowsOf(s.rquery(ctx, `SELECT id, retention_days FROM accounts WHERE retention_days > 0`)).scan(
		[]any{&id, &days}, func() { out[id] = days })
	if err != nil {
		return nil, fmt.Errorf("retention accounts: %w", err)
	}
	return out, nil
}

// RotateSecret makes next the signing secret and keeps the old one for the
// rotation grace period, during which webhooks carry both signatures.
func (s *Store) RotateSecret(ctx context.Context, accountID, next string, at time.Time) error {
	res, err := s.wexec(ctx, `UPDATE accounts SET webhook_secret_prev = webhook_secret, webhook_secret = $2,
		secret_rotated_at = $3 WHERE id = $1`, accountID, next, ms(at))
	return affectedOne(res, err, "rotate secret")
}

// AddBalance adds delta to the balance, refusing to go below zero, and
// returns the new balance (ledger.Tx). The conditional UPDATE is what keeps
// the balance non-negative under concurrent sends on every dialect. On
// PostgreSQL a node's writers keep shares of the balance (balance.go).
func (tx *Tx) AddBalance(ctx context.Context, accountID string, delta int64, at time.Time) (int64, error) {
	if tx.pg != nil {
		return tx.addHeld(ctx, accountID, delta, at)
	}
	var balance int64
	err := tx.queryRow(ctx, `UPDATE accounts SET balance = balance + $2, balance_updated_at = $3
		WHERE id = $1 AND balance + $2 >= 0 RETURNING balance`, accountID, delta, ms(at)).Scan(&balance)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, tx.shortOrMissing(ctx, accountID)
	}
	if err != nil {
		return 0, fmt.Errorf("adjust balance: %w", err)
	}
	return balance, nil
}

// shortOrMissing tells why a debit found no balance: the account does not
// exist (ErrNotFound), or it is short.
func (tx *Tx) shortOrMissing(ctx context.Context, accountID string) error {
	var one int
	err := tx.queryRow(ctx, `SELECT 1 FROM accounts WHERE id = $1`, accountID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return domain.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("read account: %w", err)
	}
	return ledger.ErrInsufficientCredits
}

func affectedOne(res sql.Result, err error, what string) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if n == 0 {
		return domain.ErrNotFound
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// pricesCol reads an account's price table and parses it once, there: the
// account is then cached for the requests of its keys, and every send reads
// its prices.
func pricesCol(name string, a *domain.Account) field { return field{name, (*priceText)(a)} }

type priceText domain.Account

func (a *priceText) arg() any  { return a.Prices }
func (a *priceText) dest() any { return a }

func (a *priceText) Scan(src any) error {
	return scanNull(src, func(v sql.NullString) { a.Prices, a.PriceTable = v.String, nil })
}

// planPricesCol reads the account's copy of its plan's table and resolves
// what the account pays, once: it comes after country_code and prices in
// the column list, which Scan fills in order.
func planPricesCol(name string, a *domain.Account) field { return field{name, (*planText)(a)} }

type planText domain.Account

func (a *planText) arg() any  { return a.PlanPrices }
func (a *planText) dest() any { return a }

func (a *planText) Scan(src any) error {
	return scanNull(src, func(v sql.NullString) {
		a.PlanPrices, a.PriceTable = v.String, nil
		if p, err := domain.ResolvePrices(v.String, a.Prices, a.CountryCode); err == nil {
			a.PriceTable = &p
		}
	})
}
