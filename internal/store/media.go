package store

import (
	"context"
	"fmt"
	"github.com/msgsvc/msgsvc/internal/domain"
)

var mediaFiles = newTable("media", func(m *domain.MediaFile, c cols) cols {
	return c.add(textCol("id", &m.ID), textCol("account_id", &m.AccountID), textCol("sha256", &m.SHA256),
		textCol("mime", &m.MIME), int64Col("size", &m.Size), textCol("kind", &m.Kind),
		timeCol("created_at", &m.CreatedAt))
})

// SaveMedia records m unless the account already has a file with the same
// SHA-256, and returns the row that is stored: m itself, or the earlier
// upload of the same content, whose id stays the one to use.
func (s *Store) SaveMedia(ctx context.Context, m domain.MediaFile) (domain.MediaFile, error) {
	// ON CONFLICT DO NOTHING means the same on both dialects, and a
	// concurrent upload of the same file cannot fail on the unique key.
	_, err := s.wexec(ctx, mediaFiles.insert(s)+` ON CONFLICT (account_id, sha256) DO NOTHING`, mediaFiles.args(&m, nil)...)
	if err != nil {
		return domain.MediaFile{}, fmt.Errorf("save media: %w", err)
	}
	// Read from the writer: a reader connection might not see the row yet.
	return mediaFiles.scan(s.w.QueryRowContext(ctx, `SELECT `+mediaFiles.list+` FROM media WHERE account_id = $1 AND sha256 = $2`,
		m.AccountID, m.SHA256))
}

// Media reads one of an account's files; another account's id is ErrNotFound.
func (s *Store) Media(ctx context.Context, accountID, id string) (domain.MediaFile, error) {
	return mediaFiles.scan(s.rqueryRow(ctx, `SELECT `+mediaFiles.list+` FROM media WHERE id = $1 AND account_id = $2`, id, accountID))
}
