package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"msgsvc/internal/domain"
	"time"
)

// APIKey is a stored key: only its hash and a display prefix, never the key.
type APIKey struct {
	ID         string
	AccountID  string
	Env        domain.Environment
	Prefix     string
	Hash       string
	Name       string
	CreatedAt  time.Time
	LastUsedAt time.Time
	RevokedAt  time.Time
}

const keyCols = `k.id, k.account_id, k.env, k.prefix, k.hash, k.name, k.created_at, k.last_used_at, k.revoked_at`

func scanKey(row interface{ Scan(...any) error }, extra ...any) (APIKey, error) {
	var k APIKey
	var created, used, revoked sql.NullInt64
	dest := append([]any{&k.ID, &k.AccountID, enumScanner[domain.Environment]{&k.Env}, &k.Prefix, &k.Hash, &k.Name, &created, &used, &revoked}, extra...)
	if err := row.Scan(dest...); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return k, ErrNotFound
		}
		return k, fmt.Errorf("scan key: %w", err)
	}
	k.CreatedAt, k.LastUsedAt, k.RevokedAt = fromMS(created), fromMS(used), fromMS(revoked)
	return k, nil
}

// CreateKey stores a new key.
func (s *Store) CreateKey(ctx context.Context, k APIKey) error {
	_, err := s.wexec(ctx, `INSERT INTO api_keys (id, account_id, env, prefix, hash, name, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, k.ID, k.AccountID, k.Env, k.Prefix, k.Hash, k.Name, ms(k.CreatedAt))
	if err != nil {
		return fmt.Errorf("create key: %w", err)
	}
	return nil
}

// KeyByHash finds an active or revoked key by its hash, with its account, in
// one read: authentication happens on every request.
func (s *Store) KeyByHash(ctx context.Context, hash string) (APIKey, Account, error) {
	row := s.rqueryRow(ctx, `SELECT `+keyCols+`, `+prefixed("a.", accountCols)+`
		FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.hash = $1`, hash)
	var a Account
	var balUpd, rotated, created sql.NullInt64
	var fallback int
	var allow string
	k, err := scanKey(row, &a.ID, &a.Name, &a.Tier, &a.Currency, &a.CountryCode, &a.Balance, &balUpd,
		&a.WebhookSecret, &a.WebhookSecretPrev, &rotated, &a.Limits.TierRPM, &a.Limits.SendRPM,
		&a.Limits.StatusRPM, &a.Limits.MediaRPM, &a.WAQualityTier, &fallback, &allow, &a.Prices, &created)
	if err != nil {
		return k, a, err
	}
	a.BalanceUpdatedAt, a.SecretRotatedAt, a.CreatedAt = fromMS(balUpd), fromMS(rotated), fromMS(created)
	a.RCSFallback = fallback != 0
	if allow != "" {
		a.IPAllowlist = splitComma(allow)
	}
	return k, a, nil
}

// Keys lists an account's keys, newest first.
func (s *Store) Keys(ctx context.Context, accountID string) ([]APIKey, error) {
	rows, err := s.rquery(ctx, `SELECT `+keyCols+` FROM api_keys k WHERE k.account_id = $1 ORDER BY k.`+s.seq()+` DESC`, accountID)
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	defer rows.Close()
	var out []APIKey
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// RevokeKey marks a key revoked; it stops working at once.
func (s *Store) RevokeKey(ctx context.Context, accountID, keyID string, at time.Time) error {
	res, err := s.wexec(ctx, `UPDATE api_keys SET revoked_at = $3 WHERE id = $1 AND account_id = $2 AND revoked_at IS NULL`,
		keyID, accountID, ms(at))
	return affectedOne(res, err, "revoke key")
}

// TouchKey records that a key was used. Callers throttle it: a write per
// request would cost more than the request.
func (s *Store) TouchKey(ctx context.Context, keyID string, at time.Time) error {
	_, err := s.wexec(ctx, `UPDATE api_keys SET last_used_at = $2 WHERE id = $1`, keyID, ms(at))
	if err != nil {
		return fmt.Errorf("touch key: %w", err)
	}
	return nil
}
