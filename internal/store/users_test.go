package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/store"
)

func TestUsersAndSessions(t *testing.T) {
	eachAccount(t, 0, func(t *testing.T, ctx context.Context, st *store.Store, acc domain.Account) {
		ana := domain.User{ID: id.New(id.User, t0), AccountID: acc.ID, Email: "Ana@Example.com", Role: "owner",
			PasswordHash: "$argon2id$x", CreatedAt: t0}
		creates := []struct {
			name    string
			user    domain.User
			wantErr error
		}{
			{"new user", ana, nil},
			{"same email, other case", domain.User{ID: id.New(id.User, at(1e6)), AccountID: acc.ID,
				Email: "ana@EXAMPLE.COM", Role: "viewer", PasswordHash: "h", CreatedAt: t0}, domain.ErrConflict},
			{"second user", domain.User{ID: id.New(id.User, at(2e6)), AccountID: acc.ID,
				Email: "bob@example.com", Role: "developer", PasswordHash: "h", CreatedAt: t0}, nil},
		}
		for _, tc := range creates {
			wantErr(t, tc.name, st.CreateUser(ctx, tc.user), tc.wantErr)
		}
		if err := st.CreateUser(ctx, domain.User{ID: id.New(id.User, at(3e6)), AccountID: acc.ID,
			Email: "eve@example.com", Role: "root", PasswordHash: "h", CreatedAt: t0}); err == nil {
			t.Error("a user with an unknown role was accepted")
		}

		stored := ana
		stored.Email = "ana@example.com" // emails are kept in lower case
		lookups := []struct {
			email   string
			wantErr error
		}{
			{"ana@example.com", nil},
			{"ANA@example.COM", nil},
			{"nobody@example.com", domain.ErrNotFound},
		}
		for _, tc := range lookups {
			u, err := st.UserByEmail(ctx, tc.email)
			wantErr(t, tc.email, err, tc.wantErr)
			if err == nil && u != stored {
				t.Errorf("%s: %+v, want %+v", tc.email, u, stored)
			}
		}

		sess := domain.Session{TokenHash: "tok-1", UserID: ana.ID, CreatedAt: t0, LastSeenAt: t0, ExpiresAt: at(time.Hour)}
		if err := st.CreateSession(ctx, sess); err != nil {
			t.Fatal(err)
		}
		extended := sess
		extended.LastSeenAt, extended.ExpiresAt = at(30*time.Minute), at(90*time.Minute)
		steps := []struct {
			name    string
			op      func() error
			want    domain.Session
			wantErr error
		}{
			{"created", func() error { return nil }, sess, nil},
			{"extended", func() error { return st.ExtendSession(ctx, sess.TokenHash, extended.LastSeenAt, extended.ExpiresAt) }, extended, nil},
			{"deleted", func() error { return st.DeleteSession(ctx, sess.TokenHash) }, domain.Session{}, domain.ErrNotFound},
		}
		for _, s := range steps {
			if err := s.op(); err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			got, u, err := st.SessionUser(ctx, sess.TokenHash)
			wantErr(t, s.name, err, s.wantErr)
			if err != nil {
				continue
			}
			if got != s.want || u != stored {
				t.Errorf("%s: session %+v user %+v; want %+v and %+v", s.name, got, u, s.want, stored)
			}
		}
		if _, _, err := st.SessionUser(ctx, "tok-missing"); err != domain.ErrNotFound {
			t.Errorf("unknown session: %v", err)
		}
	})
}
