package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Media is one account's right to use an uploaded file. The bytes are kept
// outside the database, named by SHA256.
type Media struct {
	ID        string
	AccountID string
	SHA256    string
	MIME      string
	Size      int64
	Kind      string // image, video or document
	CreatedAt time.Time
}

const mediaCols = `id, account_id, sha256, mime, size, kind, created_at`

func scanMedia(row interface{ Scan(...any) error }) (Media, error) {
	var m Media
	var created sql.NullInt64
	err := row.Scan(&m.ID, &m.AccountID, &m.SHA256, &m.MIME, &m.Size, &m.Kind, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return m, ErrNotFound
	}
	if err != nil {
		return m, fmt.Errorf("scan media: %w", err)
	}
	m.CreatedAt = fromMS(created)
	return m, nil
}

// SaveMedia records m unless the account already has a file with the same
// SHA-256, and returns the row that is stored: m itself, or the earlier
// upload of the same content, whose id stays the one to use.
func (s *Store) SaveMedia(ctx context.Context, m Media) (Media, error) {
	// ON CONFLICT DO NOTHING means the same on both dialects, and a
	// concurrent upload of the same file cannot fail on the unique key.
	_, err := s.wexec(ctx, `INSERT INTO media (`+mediaCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (account_id, sha256) DO NOTHING`,
		m.ID, m.AccountID, m.SHA256, m.MIME, m.Size, m.Kind, ms(m.CreatedAt))
	if err != nil {
		return Media{}, fmt.Errorf("save media: %w", err)
	}
	// Read from the writer: a reader connection might not see the row yet.
	return scanMedia(s.w.QueryRowContext(ctx, `SELECT `+mediaCols+` FROM media WHERE account_id = $1 AND sha256 = $2`,
		m.AccountID, m.SHA256))
}

// Media reads one of an account's files; another account's id is ErrNotFound.
func (s *Store) Media(ctx context.Context, accountID, id string) (Media, error) {
	return scanMedia(s.rqueryRow(ctx, `SELECT `+mediaCols+` FROM media WHERE id = $1 AND account_id = $2`, id, accountID))
}
