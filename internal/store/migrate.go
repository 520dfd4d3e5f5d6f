package store

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"testing/fstest"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// Migrations are one source for both dialects: migrations/common holds
// every version whose SQL runs on both, and migrations/sqlite and
// migrations/postgres hold only the versions that must differ, each in
// both folders (TestMigrationSources checks the rule).
//
//go:embed migrations
var migrations embed.FS

// migrationFS is the migration set of one dialect: the common files plus
// the dialect's own.
func migrationFS(d Dialect) (fs.FS, error) {
	out := fstest.MapFS{}
	for _, dir := range []string{"migrations/common", "migrations/" + string(d)} {
		entries, err := fs.ReadDir(migrations, dir)
		if err != nil {
			return nil, fmt.Errorf("migrations: %w", err)
		}
		for _, e := range entries {
			if _, dup := out[e.Name()]; dup {
				return nil, fmt.Errorf("migrations: %s is both common and %s-only", e.Name(), d)
			}
			b, err := fs.ReadFile(migrations, path.Join(dir, e.Name()))
			if err != nil {
				return nil, fmt.Errorf("migrations: %w", err)
			}
			out[e.Name()] = &fstest.MapFile{Data: b, Mode: 0o444}
		}
	}
	return out, nil
}

// Migrate applies every pending migration. On PostgreSQL an advisory lock
// lets several nodes start at once without racing each other.
func (s *Store) Migrate(ctx context.Context) error { return s.migrate(ctx, goose.MaxVersion) }

// migrate applies the pending migrations up to version to.
func (s *Store) migrate(ctx context.Context, to int64) error {
	set, err := migrationFS(s.dialect)
	if err != nil {
		return err
	}
	dialect := goose.DialectSQLite3
	var opts []goose.ProviderOption
	if s.dialect == Postgres {
		dialect = goose.DialectPostgres
		locker, err := lock.NewPostgresSessionLocker()
		if err != nil {
			return fmt.Errorf("migration lock: %w", err)
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	p, err := goose.NewProvider(dialect, s.w, set, opts...)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	results, err := p.UpTo(ctx, to)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for _, r := range results {
		if r.Source != nil && (r.Source.Version == senderApprovalVersion || r.Source.Version == senderKeysVersion) {
			if err := s.refreshAllSenders(ctx); err != nil {
				return fmt.Errorf("migrate: senders: %w", err)
			}
		}
	}
	return nil
}

// senderApprovalVersion is the migration that made senders requests: the
// accounts' copies of their approved senders are rewritten after it.
const senderApprovalVersion = 70

// senderKeysVersion is the migration that compares senders in their
// canonical form; it may have set twins pending, so the copies are
// rewritten after it too.
const senderKeysVersion = 135

// Conflicted reports whether a write failed only because of concurrent
// ones (it wrote nothing, and may be tried again later): what the write
// queue runs again a few times before it gives up.
func Conflicted(err error) bool { return retryable(err) }

// retryable reports whether a transaction failed only because of a
// concurrent one and may simply run again: a PostgreSQL serialization
// failure or deadlock, or SQLite busy or locked. It reads the drivers'
// error codes, not their messages.
func retryable(err error) bool {
	if errors.Is(err, errBalanceBusy) {
		return true
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Code == "40001" || pg.Code == "40P01"
	}
	return sqliteBusy(err)
}

// inserted names an insert's error: a duplicate key is domain.ErrConflict.
func inserted(err error, what string) error {
	if err == nil {
		return nil
	}
	if isUniqueViolation(err) {
		return domain.ErrConflict
	}
	return fmt.Errorf("%s: %w", what, err)
}

// isUniqueViolation reports a duplicate key, by the drivers' codes.
func isUniqueViolation(err error) bool {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Code == "23505"
	}
	return sqliteDuplicate(err)
}
