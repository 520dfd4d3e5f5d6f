package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/msgsvc/msgsvc/internal/domain"
	"strings"
	"time"
)

var users = newTable("users", func(u *domain.User, c cols) cols {
	return c.add(textCol("id", &u.ID), nullTextCol("account_id", &u.AccountID), textCol("email", &u.Email),
		textCol("role", &u.Role), textCol("password_hash", &u.PasswordHash), timeCol("created_at", &u.CreatedAt))
})

var sessions = newTable("sessions", func(s *domain.Session, c cols) cols {
	return c.add(textCol("token_hash", &s.TokenHash), textCol("user_id", &s.UserID),
		timeCol("created_at", &s.CreatedAt), timeCol("last_seen_at", &s.LastSeenAt),
		timeCol("expires_at", &s.ExpiresAt))
})

// CreateUser stores a user; a taken email is ErrConflict.
func (s *Store) CreateUser(ctx context.Context, u domain.User) error {
	u.Email = strings.ToLower(u.Email)
	_, err := s.wexec(ctx, users.insert(s), users.args(&u, nil)...)
	return inserted(err, "create user")
}

// UserByEmail finds a user by email, case-insensitively.
func (s *Store) UserByEmail(ctx context.Context, email string) (domain.User, error) {
	return users.scan(s.rqueryRow(ctx, `SELECT `+users.list+` FROM users WHERE email = $1`, strings.ToLower(email)))
}

// CreateSession stores a new session.
func (s *Store) CreateSession(ctx context.Context, ss domain.Session) error {
	return s.run(ctx, "create session", sessions.insert(s), sessions.args(&ss, nil)...)
}

// SessionUser reads a session and its user.
func (s *Store) SessionUser(ctx context.Context, tokenHash string) (domain.Session, domain.User, error) {
	var ss domain.Session
	var u domain.User
	err := s.rqueryRow(ctx, `SELECT `+prefixed("s.", sessions.list)+`, `+prefixed("u.", users.list)+`
		FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = $1`, tokenHash).
		Scan(users.dests(&u, sessions.dests(&ss, nil))...)
	if errors.Is(err, sql.ErrNoRows) {
		return ss, u, domain.ErrNotFound
	}
	if err != nil {
		return ss, u, fmt.Errorf("read session: %w", err)
	}
	return ss, u, nil
}

// ExtendSession slides a session's idle expiry.
func (s *Store) ExtendSession(ctx context.Context, tokenHash string, seen, expires time.Time) error {
	return s.run(ctx, "extend session", `UPDATE sessions SET last_seen_at = $2, expires_at = $3 WHERE token_hash = $1`,
		tokenHash, ms(seen), ms(expires))
}

// DeleteSession ends a session (logout).
func (s *Store) DeleteSession(ctx context.Context, tokenHash string) error {
	return s.run(ctx, "delete session", `DELETE FROM sessions WHERE token_hash = $1`, tokenHash)
}

// SetPassword replaces a user's password hash.
func (s *Store) SetPassword(ctx context.Context, userID, hash string) error {
	res, err := s.wexec(ctx, `UPDATE users SET password_hash = $2 WHERE id = $1`, userID, hash)
	return affectedOne(res, err, "set password")
}

// EndSessions ends a user's sessions but one (keep, "" for none): a changed
// password logs out every other browser and script.
func (s *Store) EndSessions(ctx context.Context, userID, keep string) error {
	return s.run(ctx, "end sessions", `DELETE FROM sessions WHERE user_id = $1 AND token_hash <> $2`, userID, keep)
}

// DeleteExpiredSessions drops a user's sessions that expired before t; a
// login calls it, so the table holds no more than each user's live ones
// plus those awaiting their next login.
func (s *Store) DeleteExpiredSessions(ctx context.Context, userID string, t time.Time) error {
	return s.run(ctx, "delete expired sessions", `DELETE FROM sessions WHERE user_id = $1 AND expires_at < $2`, userID, ms(t))
}

// Users lists an account's users by email.
func (s *Store) Users(ctx context.Context, accountID string) ([]domain.User, error) {
	return users.scanAll(s.rquery(ctx, `SELECT `+users.list+` FROM users WHERE account_id = $1 ORDER BY email`, accountID))
}

// DeleteUser removes a user of an account and ends their sessions.
func (s *Store) DeleteUser(ctx context.Context, accountID, userID string) error {
	return s.Write(ctx, func(tx *Tx) error {
		if _, err := tx.exec(ctx, `DELETE FROM sessions WHERE user_id IN (SELECT id FROM users WHERE id = $1 AND account_id = $2)`,
			userID, accountID); err != nil {
			return fmt.Errorf("delete user: %w", err)
		}
		res, err := tx.exec(ctx, `DELETE FROM users WHERE id = $1 AND account_id = $2`, userID, accountID)
		return affectedOne(res, err, "delete user")
	})
}
