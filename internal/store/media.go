package store

import (
	"context"
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

var mediaFiles = newTable("media",
	textCol("id", func(m *Media) *string { return &m.ID }),
	textCol("account_id", func(m *Media) *string { return &m.AccountID }),
	textCol("sha256", func(m *Media) *string { return &m.SHA256 }),
	textCol("mime", func(m *Media) *string { return &m.MIME }),
	int64Col("size", func(m *Media) *int64 { return &m.Size }),
	textCol("kind", func(m *Media) *string { return &m.Kind }),
	timeCol("created_at", func(m *Media) *time.Time { return &m.CreatedAt }),
)

// SaveMedia records m unless the account already has a file with the same
// SHA-256, and returns the row that is stored: m itself, or the earlier
// upload of the same content, whose id stays the one to use.
func (s *Store) SaveMedia(ctx context.Context, m Media) (Media, error) {
	// ON CONFLICT DO NOTHING means the same on both dialects, and a
	// concurrent upload of the same file cannot fail on the unique key.
	_, err := s.wexec(ctx, mediaFiles.insert(s)+` ON CONFLICT (account_id, sha256) DO NOTHING`, mediaFiles.args(&m, nil)...)
	if err != nil {
		return Media{}, fmt.Errorf("save media: %w", err)
	}
	// Read from the writer: a reader connection might not see the row yet.
	return mediaFiles.scan(s.w.QueryRowContext(ctx, `SELECT `+mediaFiles.list+` FROM media WHERE account_id = $1 AND sha256 = $2`,
		m.AccountID, m.SHA256))
}

// Media reads one of an account's files; another account's id is ErrNotFound.
func (s *Store) Media(ctx context.Context, accountID, id string) (Media, error) {
	return mediaFiles.scan(s.rqueryRow(ctx, `SELECT `+mediaFiles.list+` FROM media WHERE id = $1 AND account_id = $2`, id, accountID))
}
