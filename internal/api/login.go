package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"msgsvc/internal/api/view"
	"msgsvc/internal/store"
	"msgsvc/internal/user"
)

type loginRequest struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

type loginResponse struct {
	Token     string    `json:"token"`
	ExpiresAt view.Time `json:"expiresAt"`
}

var errBadLogin = problem("INVALID_CREDENTIALS", "The email or password is wrong.")

// login exchanges a panel user's email and password for a session token.
// Failed logins count against the client address like failed API keys.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	addrKey := "ip:" + s.clientAddr(r).String()
	if s.cfg.Guard != nil {
		if d, err := s.cfg.Guard.Exceeded(r.Context(), addrKey, s.cfg.AuthFailuresPerMinute); err == nil && !d.Allowed {
			s.refuse(w, r, d)
			return
		}
	}
	body, err := readBody(w, r)
	if err != nil {
		writeProblem(w, r, s.cfg.Log, err)
		return
	}
	var req loginRequest
	if err := decodeJSON(body, &req); err != nil {
		writeProblem(w, r, s.cfg.Log, err)
		return
	}
	u, err := s.cfg.Store.UserByEmail(r.Context(), req.Email)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		writeProblem(w, r, s.cfg.Log, err)
		return
	}
	ok := false
	if err == nil {
		ok, _ = user.VerifyPassword(u.PasswordHash, req.Password)
	}
	if !ok {
		s.authFailure(w, r, addrKey, errBadLogin)
		return
	}
	token, hash, err := user.NewToken()
	if err != nil {
		writeProblem(w, r, s.cfg.Log, err)
		return
	}
	now := s.cfg.Now().UTC()
	exp := now.Add(s.cfg.SessionTTL)
	if err := s.cfg.Store.CreateSession(r.Context(), store.Session{TokenHash: hash, UserID: u.ID, CreatedAt: now,
		LastSeenAt: now, ExpiresAt: exp}); err != nil {
		writeProblem(w, r, s.cfg.Log, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(loginResponse{Token: token, ExpiresAt: view.Time(exp.Truncate(time.Millisecond))})
}
