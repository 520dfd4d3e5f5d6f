package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"msgsvc/internal/domain"
	"msgsvc/internal/ledger"
	"strings"
	"time"
)

// Limits are an account's requests per minute; 0 means unlimited.
type Limits struct {
	TierRPM, SendRPM, StatusRPM, MediaRPM int
}

// Account is a customer of the service.
type Account struct {
	ID                string
	Name              string
	Tier              string
	Currency          string
	CountryCode       string
	Balance           int64 // micro-credits
	BalanceUpdatedAt  time.Time
	WebhookSecret     string
	WebhookSecretPrev string // still signed with during a rotation
	SecretRotatedAt   time.Time
	Limits            Limits
	WAQualityTier     int
	RCSFallback       bool
	IPAllowlist       []string
	Prices            string // JSON price overrides, empty for the defaults
	Senders           Senders
	CreatedAt         time.Time
}

// Senders are an account's approved senders by channel.
type Senders map[domain.Channel]ChannelSenders

// ChannelSenders are the approved senders of one channel and its default.
type ChannelSenders struct {
	Values  []string `json:"values"`
	Default string   `json:"default,omitempty"`
}

var accounts = newTable("accounts",
	textCol("id", func(a *Account) *string { return &a.ID }),
	textCol("name", func(a *Account) *string { return &a.Name }),
	textCol("tier", func(a *Account) *string { return &a.Tier }),
	textCol("currency", func(a *Account) *string { return &a.Currency }),
	textCol("country_code", func(a *Account) *string { return &a.CountryCode }),
	int64Col("balance", func(a *Account) *int64 { return &a.Balance }),
	timeCol("balance_updated_at", func(a *Account) *time.Time { return &a.BalanceUpdatedAt }),
	textCol("webhook_secret", func(a *Account) *string { return &a.WebhookSecret }),
	textCol("webhook_secret_prev", func(a *Account) *string { return &a.WebhookSecretPrev }),
	msCol("secret_rotated_at", func(a *Account) *time.Time { return &a.SecretRotatedAt }),
	intCol("tier_rpm", func(a *Account) *int { return &a.Limits.TierRPM }),
	intCol("send_rpm", func(a *Account) *int { return &a.Limits.SendRPM }),
	intCol("status_rpm", func(a *Account) *int { return &a.Limits.StatusRPM }),
	intCol("media_rpm", func(a *Account) *int { return &a.Limits.MediaRPM }),
	intCol("wa_quality_tier", func(a *Account) *int { return &a.WAQualityTier }),
	boolCol("rcs_fallback", func(a *Account) *bool { return &a.RCSFallback }),
	listCol("ip_allowlist", func(a *Account) *[]string { return &a.IPAllowlist }),
	textCol("prices", func(a *Account) *string { return &a.Prices }),
	jsonCol("senders", func(a *Account) *Senders { return &a.Senders }),
	timeCol("created_at", func(a *Account) *time.Time { return &a.CreatedAt }),
)

// CreateAccount inserts a new account with a zero balance; opening credits
// go through the ledger (ledger.Credit) so that it explains them.
func (s *Store) CreateAccount(ctx context.Context, a Account) error {
	a.Balance, a.BalanceUpdatedAt = 0, a.CreatedAt
	_, err := s.wexec(ctx, accounts.insert(s), accounts.args(&a, nil)...)
	if err != nil {
		return fmt.Errorf("create account: %w", err)
	}
	return nil
}

// Account reads one account.
func (s *Store) Account(ctx context.Context, id string) (Account, error) {
	return accounts.scan(s.rqueryRow(ctx, `SELECT `+accounts.list+` FROM accounts WHERE id = $1`, id))
}

// Accounts lists every account, oldest first (operators' tools).
func (s *Store) Accounts(ctx context.Context) ([]Account, error) {
	return accounts.scanAll(s.rquery(ctx, `SELECT `+accounts.list+` FROM accounts ORDER BY created_at, id`))
}

// SetLimits replaces an account's rate limits.
func (s *Store) SetLimits(ctx context.Context, accountID string, l Limits) error {
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

// RotateSecret makes next the signing secret and keeps the old one for the
// rotation grace period, during which webhooks carry both signatures.
func (s *Store) RotateSecret(ctx context.Context, accountID, next string, at time.Time) error {
	res, err := s.wexec(ctx, `UPDATE accounts SET webhook_secret_prev = webhook_secret, webhook_secret = $2,
		secret_rotated_at = $3 WHERE id = $1`, accountID, next, ms(at))
	return affectedOne(res, err, "rotate secret")
}

// AddBalance adds delta to the balance, refusing to go below zero, and
// returns the new balance (ledger.Tx). The conditional UPDATE is what keeps
// the balance non-negative under concurrent sends on every dialect.
func (tx *Tx) AddBalance(ctx context.Context, accountID string, delta int64, at time.Time) (int64, error) {
	var balance int64
	err := tx.queryRow(ctx, `UPDATE accounts SET balance = balance + $2, balance_updated_at = $3
		WHERE id = $1 AND balance + $2 >= 0 RETURNING balance`, accountID, delta, ms(at)).Scan(&balance)
	if errors.Is(err, sql.ErrNoRows) {
		if _, err := accounts.scan(tx.queryRow(ctx, `SELECT `+accounts.list+` FROM accounts WHERE id = $1`, accountID)); err != nil {
			return 0, err
		}
		return 0, ledger.ErrInsufficientCredits
	}
	if err != nil {
		return 0, fmt.Errorf("adjust balance: %w", err)
	}
	return balance, nil
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
		return ErrNotFound
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
