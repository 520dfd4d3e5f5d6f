package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// PlatformMedia finds a platform's id for an uploaded file (by SHA-256)
// in scope, if it was uploaded after since; found is false otherwise.
func (s *Store) PlatformMedia(ctx context.Context, scope, sha256 string, since time.Time) (id string, found bool, err error) {
	err = s.rqueryRow(ctx, `SELECT platform_id FROM platform_media WHERE scope = $1 AND sha256 = $2 AND uploaded_at > $3`,
		scope, sha256, ms(since)).Scan(&id)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("platform media: %w", err)
	}
	return id, true, nil
}

// SavePlatformMedia remembers a platform's id for a file, replacing an
// older upload of the same file in scope.
func (s *Store) SavePlatformMedia(ctx context.Context, scope, sha256, platformID string, at time.Time) error {
	return s.run(ctx, "save platform media", `INSERT INTO platform_media (scope, sha256, platform_id, uploaded_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (scope, sha256) DO UPDATE SET platform_id = excluded.platform_id, uploaded_at = excluded.uploaded_at`,
		scope, sha256, platformID, ms(at))
}
