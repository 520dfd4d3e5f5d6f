// Package api serves the integration API: routes, authentication, rate
// limits, and the translation of every error into RFC 9457 problem+json
// with a stable code.
package api

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"msgsvc/internal/message"
	"msgsvc/internal/store"
)

// Problem is an RFC 9457 problem detail with the contract's extensions.
type Problem struct {
	Type      string               `json:"type"`
	Title     string               `json:"title"`
	Status    int                  `json:"status"`
	Code      string               `json:"code"`
	Detail    string               `json:"detail,omitempty"`
	RequestID string               `json:"requestId,omitempty"`
	Errors    []message.FieldError `json:"errors,omitempty"`
}

func (p *Problem) Error() string { return p.Code + ": " + p.Detail }

// problem makes a Problem for a contract code.
func problem(status int, code, detail string) *Problem {
	return &Problem{Type: "about:blank", Title: http.StatusText(status), Status: status, Code: code, Detail: detail}
}

func validation(detail string, fields ...message.FieldError) *Problem {
	p := problem(http.StatusBadRequest, "VALIDATION_ERROR", detail)
	p.Errors = fields
	return p
}

func fieldError(field, msg string) *Problem {
	return validation(field+" "+msg, message.FieldError{Field: field, Message: msg})
}

var (
	errNotFound = problem(http.StatusNotFound, "NOT_FOUND", "No such resource in this account.")
)

// toProblem maps an error from any layer to the answer the client sees.
// Unknown errors become 500 INTERNAL without leaking their text.
func toProblem(err error) *Problem {
	var p *Problem
	if errors.As(err, &p) {
		return p
	}
	if v, ok := message.IsValidation(err); ok {
		detail := v.Detail
		if detail == "" {
			detail = "The request is not valid: " + v.Error() + "."
		}
		return validation(detail, v.Fields...)
	}
	if rf := (*message.Refusal)(nil); errors.As(err, &rf) { // OUTSIDE_CONVERSATION_WINDOW, DAILY_LIMIT_REACHED
		return &Problem{Type: "about:blank", Title: http.StatusText(rf.Status), Status: rf.Status, Code: rf.Code, Detail: rf.Detail, Errors: rf.Fields}
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		return errNotFound
	case errors.Is(err, store.ErrInsufficientCredits):
		return problem(http.StatusPaymentRequired, "INSUFFICIENT_CREDITS", "The balance does not cover the cost of this send.")
	case errors.Is(err, store.ErrIdempotencyConflict):
		return problem(http.StatusConflict, "IDEMPOTENCY_CONFLICT", "This Idempotency-Key was already used with a different request.")
	case errors.Is(err, message.ErrNotCancelable):
		return problem(http.StatusConflict, "MESSAGE_NOT_CANCELABLE", "The message was already handed to a provider or has ended.")
	}
	return problem(http.StatusInternalServerError, "INTERNAL", "Something went wrong on our side; the request ID helps us find it.")
}

// writeProblem sends err as problem+json and logs server-side failures.
func writeProblem(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	p := *toProblem(err)
	p.RequestID = w.Header().Get("X-Request-Id")
	if p.Status >= 500 {
		log.Error("request failed", "method", r.Method, "path", r.URL.Path, "requestId", p.RequestID, "err", err)
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(p.Status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(p)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func writeRaw(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
