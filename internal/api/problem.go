// Package api serves the integration API: routes, authentication, rate
// limits, and the translation of every error into RFC 9457 problem+json
// with a stable code.
package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/manage"
	"github.com/msgsvc/msgsvc/internal/message"
)

// Problem is an RFC 9457 problem detail with the contract's extensions.
type Problem struct {
	Type      string              `json:"type"`
	Title     string              `json:"title"`
	Status    int                 `json:"status"`
	Code      string              `json:"code"`
	Detail    string              `json:"detail,omitempty"`
	RequestID string              `json:"requestId,omitempty"`
	Errors    []domain.FieldError `json:"errors,omitempty"`
}

func (p *Problem) Error() string { return p.Code + ": " + p.Detail }

// codes is the catalogue of every error code the API answers with and its
// HTTP status, for the integration API and the management API alike.
var codes = map[string]int{
	"MISSING_API_KEY":             http.StatusUnauthorized,
	"INVALID_API_KEY":             http.StatusUnauthorized,
	"INVALID_CREDENTIALS":         http.StatusUnauthorized,
	"INVALID_TOKEN":               http.StatusUnauthorized,
	"INVALID_SIGNATURE":           http.StatusUnauthorized, // providers' webhooks (internal/provider/…)
	"TOKEN_EXPIRED":               http.StatusUnauthorized,
	"FORBIDDEN":                   http.StatusForbidden,
	"IP_NOT_ALLOWED":              http.StatusForbidden,
	"ACCOUNT_SUSPENDED":           http.StatusForbidden,
	"NOT_FOUND":                   http.StatusNotFound,
	"METHOD_NOT_ALLOWED":          http.StatusMethodNotAllowed,
	"VALIDATION_ERROR":            http.StatusBadRequest,
	"INSUFFICIENT_CREDITS":        http.StatusPaymentRequired,
	"MESSAGE_NOT_CANCELABLE":      http.StatusConflict,
	"IDEMPOTENCY_CONFLICT":        http.StatusConflict,
	"SENDER_TAKEN":                http.StatusConflict,
	"SMPP_USER_LIMIT_REACHED":     http.StatusConflict,
	"PAYLOAD_TOO_LARGE":           http.StatusRequestEntityTooLarge,
	"UNSUPPORTED_MEDIA_TYPE":      http.StatusUnsupportedMediaType,
	"OUTSIDE_CONVERSATION_WINDOW": http.StatusUnprocessableEntity,
	"RECIPIENT_OPTED_OUT":         http.StatusUnprocessableEntity,
	"DESTINATION_NOT_ALLOWED":     http.StatusForbidden,
	"MESSAGE_NOT_HELD":            http.StatusConflict,
	"DAILY_LIMIT_REACHED":         http.StatusTooManyRequests,
	"RATE_LIMITED":                http.StatusTooManyRequests,
	"INTERNAL":                    http.StatusInternalServerError,
	"SERVICE_UNAVAILABLE":         http.StatusServiceUnavailable,

	"TWILIO_CREDENTIAL_LIMIT_REACHED": http.StatusConflict,

	"ACCOUNT_TREE_TOO_DEEP":      http.StatusConflict,
	"ACCOUNT_HAS_CHILDREN":       http.StatusConflict,
	"CHILD_INSUFFICIENT_CREDITS": http.StatusConflict,
}

// unavailableRetry is the Retry-After of SERVICE_UNAVAILABLE: long enough
// for a node whose storage cannot write not to be hammered, short enough
// that clients come back soon after the operator made room.
const unavailableRetry = "5"

// problem makes a Problem for a code of the catalogue; an unknown code is
// a programming error and answers 500.
func problem(code, detail string) *Problem {
	status, ok := codes[code]
	if !ok {
		status = http.StatusInternalServerError
	}
	return &Problem{Type: "about:blank", Title: http.StatusText(status), Status: status, Code: code, Detail: detail}
}

func validation(detail string, fields ...domain.FieldError) *Problem {
	p := problem("VALIDATION_ERROR", detail)
	p.Errors = fields
	return p
}

func fieldError(field, msg string) *Problem {
	return validation(field+" "+msg, domain.FieldError{Field: field, Message: msg})
}

var (
	errNotFound = problem("NOT_FOUND", "No such resource in this account.")
	errBadLogin = problem("INVALID_CREDENTIALS", "The email or password is wrong.")
)

// toProblem maps an error from any layer to the answer the client sees.
// Unknown errors become 500 INTERNAL without leaking their text.
func toProblem(err error) *Problem {
	var p *Problem
	if errors.As(err, &p) {
		return p
	}
	if v, ok := domain.IsValidation(err); ok {
		detail := v.Detail
		if detail == "" {
			detail = "The request is not valid: " + v.Error() + "."
		}
		return validation(detail, v.Fields...)
	}
	if rf := (*message.Refusal)(nil); errors.As(err, &rf) { // OUTSIDE_CONVERSATION_WINDOW, DAILY_LIMIT_REACHED
		p := problem(rf.Code, rf.Detail)
		p.Errors = rf.Fields
		return p
	}
	if t, ok := manage.IsThrottled(err); ok {
		return problem("RATE_LIMITED", fmt.Sprintf("Too many attempts; retry after %d seconds.", int((t.RetryAfter+time.Second-1)/time.Second)))
	}
	if l := (*manage.ErrSMPPUserLimit)(nil); errors.As(err, &l) {
		return problem("SMPP_USER_LIMIT_REACHED", fmt.Sprintf("The account has %d SMPP users, the most it may have; remove one before making another.", l.Max))
	}
	if l := (*manage.ErrTwilioCredentialLimit)(nil); errors.As(err, &l) {
		return problem("TWILIO_CREDENTIAL_LIMIT_REACHED", fmt.Sprintf("The account has %d Twilio credentials, the most it may have; remove one before making another.", l.Max))
	}
	switch {
	case errors.Is(err, domain.ErrSuspended):
		return errSuspended
	case errors.Is(err, manage.ErrForbidden):
		return errForbidden
	case errors.Is(err, manage.ErrInvalidToken):
		return errInvalidToken
	case errors.Is(err, manage.ErrTokenExpired):
		return errTokenExpired
	case errors.Is(err, manage.ErrBadCredentials):
		return errBadLogin
	case errors.Is(err, message.ErrNotFound):
		return errNotFound
	case errors.Is(err, message.ErrInsufficientCredits):
		return problem("INSUFFICIENT_CREDITS", "The balance does not cover the cost of this send.")
	case errors.Is(err, message.ErrIdempotencyConflict):
		return problem("IDEMPOTENCY_CONFLICT", "This Idempotency-Key was already used with a different request.")
	case errors.Is(err, manage.ErrSenderTaken):
		return problem("SENDER_TAKEN", "This sender is already approved for another account on that channel.")
	case errors.Is(err, domain.ErrNotHeld):
		return problem("MESSAGE_NOT_HELD", "The message is not held by the fraud guard (it was released or rejected, or never held).")
	case errors.Is(err, message.ErrNotCancelable):
		return problem("MESSAGE_NOT_CANCELABLE", "The message was already handed to a provider or has ended.")
	case errors.Is(err, domain.ErrStorageUnavailable):
		return problem("SERVICE_UNAVAILABLE", "The service cannot record requests right now; nothing was done. Retry after the time in Retry-After.")
	}
	return problem("INTERNAL", "Something went wrong on our side; the request ID helps us find it.")
}

// writeProblem sends err as problem+json and logs server-side failures.
func writeProblem(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	p := *toProblem(err)
	p.RequestID = w.Header().Get("X-Request-Id")
	if p.Status >= 500 {
		log.Error("request failed", "method", r.Method, "path", r.URL.Path, "requestId", p.RequestID, "err", err)
	}
	if p.Status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", unavailableRetry)
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(p.Status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(p)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := jsonBody(v)
	if err != nil {
		status, body = http.StatusInternalServerError, []byte(`{"status":500,"code":"INTERNAL"}`+"\n")
	}
	writeRaw(w, status, body)
}

// answer writes toView(v) with status once an operation succeeded, and
// hands its error back to the caller's error handling when it did not.
func answer[T, V any](w http.ResponseWriter, status int, v T, err error, toView func(T) V) error {
	if err != nil {
		return err
	}
	writeJSON(w, status, toView(v))
	return nil
}

// noContent answers 204 once an operation that returns nothing
// succeeded, and hands its error back when it did not.
func noContent(w http.ResponseWriter, err error) error {
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// writeList answers a list operation that succeeded with each item in its
// wire view, under name (an empty list is [], not null), and hands its
// error back when it did not.
func writeList[T, V any](w http.ResponseWriter, name string, list []T, err error, toView func(T) V) error {
	if err != nil {
		return err
	}
	out := make([]V, 0, len(list))
	for _, x := range list {
		out = append(out, toView(x))
	}
	writeJSON(w, http.StatusOK, map[string]any{name: out})
	return nil
}

// jsonBody is the one encoding of JSON answers; a remembered answer
// replayed for an Idempotency-Key is these same bytes.
func jsonBody(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return b.Bytes(), err
}

func writeRaw(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
