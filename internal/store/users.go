package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// User is a person who logs in to the panel.
type User struct {
	ID           string
	AccountID    string
	Email        string
	Role         string
	PasswordHash string
	CreatedAt    time.Time
}

// CreateUser stores a user; a taken email is ErrConflict.
func (s *Store) CreateUser(ctx context.Context, u User) error {
	_, err := s.wexec(ctx, `INSERT INTO users (id, account_id, email, role, password_hash, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, u.ID, u.AccountID, strings.ToLower(u.Email), u.Role, u.PasswordHash, ms(u.CreatedAt))
	if err != nil {
		if isUniqueViolation(err) {
			return ErrConflict
		}
		return fmt.Errorf("create user: %w", err)
	}
	return nil
}

// UserByEmail finds a user by email, case-insensitively.
func (s *Store) UserByEmail(ctx context.Context, email string) (User, error) {
	return scanUser(s.rqueryRow(ctx, `SELECT id, account_id, email, role, password_hash, created_at FROM users
		WHERE email = $1`, strings.ToLower(email)))
}

func scanUser(row *sql.Row) (User, error) {
	var u User
	var at int64
	err := row.Scan(&u.ID, &u.AccountID, &u.Email, &u.Role, &u.PasswordHash, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return u, ErrNotFound
	}
	if err != nil {
		return u, fmt.Errorf("scan user: %w", err)
	}
	u.CreatedAt = time.UnixMilli(at).UTC()
	return u, nil
}

// Session is a panel login.
type Session struct {
	TokenHash  string
	UserID     string
	CreatedAt  time.Time
	LastSeenAt time.Time
	ExpiresAt  time.Time
}

// CreateSession stores a new session.
func (s *Store) CreateSession(ctx context.Context, ss Session) error {
	_, err := s.wexec(ctx, `INSERT INTO sessions (token_hash, user_id, created_at, last_seen_at, expires_at)
		VALUES ($1, $2, $3, $4, $5)`, ss.TokenHash, ss.UserID, ms(ss.CreatedAt), ms(ss.LastSeenAt), ms(ss.ExpiresAt))
	if err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	return nil
}

// SessionUser reads a session and its user.
func (s *Store) SessionUser(ctx context.Context, tokenHash string) (Session, User, error) {
	var ss Session
	var u User
	var created, seen, expires, ucreated int64
	err := s.rqueryRow(ctx, `SELECT s.token_hash, s.user_id, s.created_at, s.last_seen_at, s.expires_at,
		u.id, u.account_id, u.email, u.role, u.password_hash, u.created_at
		FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = $1`, tokenHash).
		Scan(&ss.TokenHash, &ss.UserID, &created, &seen, &expires, &u.ID, &u.AccountID, &u.Email, &u.Role, &u.PasswordHash, &ucreated)
	if errors.Is(err, sql.ErrNoRows) {
		return ss, u, ErrNotFound
	}
	if err != nil {
		return ss, u, fmt.Errorf("read session: %w", err)
	}
	ss.CreatedAt, ss.LastSeenAt, ss.ExpiresAt = time.UnixMilli(created).UTC(), time.UnixMilli(seen).UTC(), time.UnixMilli(expires).UTC()
	u.CreatedAt = time.UnixMilli(ucreated).UTC()
	return ss, u, nil
}

// ExtendSession slides a session's idle expiry.
func (s *Store) ExtendSession(ctx context.Context, tokenHash string, seen, expires time.Time) error {
	_, err := s.wexec(ctx, `UPDATE sessions SET last_seen_at = $2, expires_at = $3 WHERE token_hash = $1`,
		tokenHash, ms(seen), ms(expires))
	if err != nil {
		return fmt.Errorf("extend session: %w", err)
	}
	return nil
}

// DeleteSession ends a session (logout).
func (s *Store) DeleteSession(ctx context.Context, tokenHash string) error {
	if _, err := s.wexec(ctx, `DELETE FROM sessions WHERE token_hash = $1`, tokenHash); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}
