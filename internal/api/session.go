package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/api/view"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/manage"
	"github.com/msgsvc/msgsvc/internal/ratelimit"
)

// Sessions and the management API (docs/panel.md). A session token
// is accepted only here, as Authorization: Bearer, and API keys never are;
// the integration API accepts only keys (an unknown "sess_" key is just an
// invalid key there).

var (
	errNoToken      = problem("INVALID_TOKEN", "Send a session token from POST /api/v1/auth/login as Authorization: Bearer <token>.")
	errInvalidToken = problem("INVALID_TOKEN", "The session token is unknown or was logged out; log in again.")
	errTokenExpired = problem("TOKEN_EXPIRED", "The session expired after being idle; log in again with POST /api/v1/auth/login.")
	errForbidden    = problem("FORBIDDEN", "Your role does not allow this action.")
)

// Sessions signs operators and account users in and out.
type Sessions interface {
	LoginFrom(ctx context.Context, addr, email, password string) (manage.Session, error)
	Authenticate(ctx context.Context, token string) (manage.Actor, error)
	Logout(ctx context.Context, token string) error
	ChangePassword(ctx context.Context, a manage.Actor, current, next string) error
}

// manageHandler is a management endpoint: it gets the authenticated
// user and returns an error instead of writing one.
type manageHandler func(w http.ResponseWriter, r *http.Request, a manage.Actor) error

func (s *Server) managed(pattern string, h manageHandler) {
	s.handle(pattern, s.wrapSession(h))
}

// bearer reads the token of Authorization: Bearer.
func bearer(r *http.Request) string {
	if a := r.Header.Get("Authorization"); len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
		return strings.TrimSpace(a[7:])
	}
	return ""
}

// wrapSession authenticates a session token. Failures count against the
// client address like failed keys; an expired token counts too, since a
// client can tell it from the answer and stop.
func (s *Server) wrapSession(h manageHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		addrKey := "ip:" + s.clientAddr(r).String()
		token := bearer(r)
		if token == "" {
			s.authFailure(w, r, addrKey, errNoToken)
			return
		}
		a, err := s.cfg.Manage.Authenticate(r.Context(), token)
		if errors.Is(err, manage.ErrInvalidToken) || errors.Is(err, manage.ErrTokenExpired) {
			s.authFailure(w, r, addrKey, toProblem(err))
			return
		}
		if err != nil { // storage failed, not the client: nothing to count
			writeProblem(w, r, s.cfg.Log, err)
			return
		}
		if err := h(w, r, a); err != nil {
			writeProblem(w, r, s.cfg.Log, err)
		}
	})
}

type loginRequest struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

// check refuses a login that leaves out the email or the password: that is
// a malformed request (400 naming the fields), not wrong credentials, and it
// costs nothing from the address's budget of failed logins.
func (l loginRequest) check() error {
	var missing []domain.FieldError
	if strings.TrimSpace(l.Email) == "" {
		missing = append(missing, domain.FieldError{Field: "email", Message: "is required"})
	}
	if l.Password == "" {
		missing = append(missing, domain.FieldError{Field: "password", Message: "is required"})
	}
	if len(missing) > 0 {
		return validation("Give both email and password.", missing...)
	}
	return nil
}

type loginResponse struct {
	Token     string    `json:"token"`
	ExpiresAt view.Time `json:"expiresAt"`
}

// login exchanges a panel user's email and password for a session token.
// Failed logins count against the client address like failed API keys; a
// client address over its budget is refused before the password is
// checked. The budget is per address only, so failures from elsewhere
// never lock a user out.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	addrKey := "ip:" + s.clientAddr(r).String()
	if d := s.addrWindow(r, addrKey, false); !d.Allowed {
		s.refuse(w, r, d)
		return
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
	if err := req.check(); err != nil {
		writeProblem(w, r, s.cfg.Log, err)
		return
	}
	sess, err := s.cfg.Manage.LoginFrom(r.Context(), s.clientAddr(r).String(), req.Email, req.Password)
	if t, ok := manage.IsThrottled(err); ok {
		s.refuse(w, r, ratelimit.Decision{RetryAfter: t.RetryAfter})
		return
	}
	if errors.Is(err, manage.ErrBadCredentials) {
		s.authFailure(w, r, addrKey, toProblem(err))
		return
	}
	if err != nil {
		writeProblem(w, r, s.cfg.Log, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(loginResponse{Token: sess.Token, ExpiresAt: view.Time(sess.ExpiresAt.Truncate(time.Millisecond))})
}

// logout ends the session of the bearer token: 204, or INVALID_TOKEN for
// a token that is not a session. An expired session can still log out.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	token := bearer(r)
	if token == "" {
		writeProblem(w, r, s.cfg.Log, errNoToken)
		return
	}
	if err := s.cfg.Manage.Logout(r.Context(), token); err != nil {
		writeProblem(w, r, s.cfg.Log, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

type passwordRequest struct {
	CurrentPassword string `json:"currentPassword"`
	NewPassword     string `json:"newPassword"`
}

// changePassword replaces the user's password; every other session of the
// user ends, this one stays.
func (s *Server) changePassword(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	var req passwordRequest
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	err := s.cfg.Manage.ChangePassword(r.Context(), a, req.CurrentPassword, req.NewPassword)
	if t, ok := manage.IsThrottled(err); ok {
		s.refuse(w, r, ratelimit.Decision{RetryAfter: t.RetryAfter})
		return nil
	}
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// readJSON reads and strictly decodes a JSON body.
func readJSON(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := readBody(w, r)
	if err != nil {
		return err
	}
	return decodeJSON(body, v)
}
