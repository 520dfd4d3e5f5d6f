package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
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
	CreatedAt         time.Time
}

const accountCols = `id, name, tier, currency, country_code, balance, balance_updated_at, webhook_secret,
	webhook_secret_prev, secret_rotated_at, tier_rpm, send_rpm, status_rpm, media_rpm, wa_quality_tier,
	rcs_fallback, ip_allowlist, prices, created_at`

func scanAccount(row interface{ Scan(...any) error }) (Account, error) {
	var a Account
	var balUpd, rotated, created sql.NullInt64
	var fallback int
	var allow string
	err := row.Scan(&a.ID, &a.Name, &a.Tier, &a.Currency, &a.CountryCode, &a.Balance, &balUpd,
		&a.WebhookSecret, &a.WebhookSecretPrev, &rotated, &a.Limits.TierRPM, &a.Limits.SendRPM,
		&a.Limits.StatusRPM, &a.Limits.MediaRPM, &a.WAQualityTier, &fallback, &allow, &a.Prices, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return a, ErrNotFound
	}
	if err != nil {
		return a, fmt.Errorf("scan account: %w", err)
	}
	a.BalanceUpdatedAt, a.SecretRotatedAt, a.CreatedAt = fromMS(balUpd), fromMS(rotated), fromMS(created)
	a.RCSFallback = fallback != 0
	if allow != "" {
		a.IPAllowlist = strings.Split(allow, ",")
	}
	return a, nil
}

// CreateAccount inserts a new account with a zero balance; opening credits
// go through AddCredits so that the ledger explains them.
func (s *Store) CreateAccount(ctx context.Context, a Account) error {
	_, err := s.wexec(ctx, `INSERT INTO accounts (`+accountCols+`)
		VALUES ($1, $2, $3, $4, $5, 0, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
		a.ID, a.Name, a.Tier, a.Currency, a.CountryCode, ms(a.CreatedAt), a.WebhookSecret, a.WebhookSecretPrev,
		ms(a.SecretRotatedAt), a.Limits.TierRPM, a.Limits.SendRPM, a.Limits.StatusRPM, a.Limits.MediaRPM,
		a.WAQualityTier, boolInt(a.RCSFallback), strings.Join(a.IPAllowlist, ","), a.Prices, ms(a.CreatedAt))
	if err != nil {
		return fmt.Errorf("create account: %w", err)
	}
	return nil
}

// Account reads one account.
func (s *Store) Account(ctx context.Context, id string) (Account, error) {
	return scanAccount(s.rqueryRow(ctx, `SELECT `+accountCols+` FROM accounts WHERE id = $1`, id))
}

// Accounts lists every account, oldest first (operators' tools).
func (s *Store) Accounts(ctx context.Context) ([]Account, error) {
	rows, err := s.rquery(ctx, `SELECT `+accountCols+` FROM accounts ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("list accounts: %w", err)
	}
	defer rows.Close()
	var out []Account
	for rows.Next() {
		a, err := scanAccount(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
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
		if _, err := scanAccount(tx.queryRow(ctx, `SELECT `+accountCols+` FROM accounts WHERE id = $1`, accountID)); err != nil {
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
