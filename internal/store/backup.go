package store

import (
	"context"
	"errors"
	"fmt"
	"os"
)

// ErrBackupPostgres: PostgreSQL has its own tools (pg_dump) for this.
var ErrBackupPostgres = errors.New("backups of PostgreSQL are made with pg_dump (or your provider's snapshots), not by msgsvc")

// Backup writes a consistent copy of a SQLite database to path while the
// service keeps running: VACUUM INTO reads one snapshot (WAL readers never
// block the writer) and writes a compact new file. Rowids are kept, so
// lists that follow the write order read the same from the copy. path
// must not exist.
func (s *Store) Backup(ctx context.Context, path string) error {
	if s.dialect != SQLite {
		return ErrBackupPostgres
	}
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("backup: %s already exists; choose a new name (backups are never overwritten)", path)
	}
	if _, err := s.r.ExecContext(ctx, `VACUUM INTO ?`, path); err != nil {
		return fmt.Errorf("backup to %s: %w", path, err)
	}
	return nil
}
