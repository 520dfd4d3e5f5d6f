package client

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"
)

// The problem codes the API answers with (Error.Code).
const (
	CodeMissingAPIKey             = "MISSING_API_KEY"
	CodeInvalidAPIKey             = "INVALID_API_KEY"
	CodeForbidden                 = "FORBIDDEN"
	CodeIPNotAllowed              = "IP_NOT_ALLOWED"
	CodeAccountSuspended          = "ACCOUNT_SUSPENDED"
	CodeNotFound                  = "NOT_FOUND"
	CodeValidation                = "VALIDATION_ERROR"
	CodeInsufficientCredits       = "INSUFFICIENT_CREDITS"
	CodeMessageNotCancelable      = "MESSAGE_NOT_CANCELABLE"
	CodeIdempotencyConflict       = "IDEMPOTENCY_CONFLICT"
	CodePayloadTooLarge           = "PAYLOAD_TOO_LARGE"
	CodeUnsupportedMediaType      = "UNSUPPORTED_MEDIA_TYPE"
	CodeOutsideConversationWindow = "OUTSIDE_CONVERSATION_WINDOW"
	CodeRecipientOptedOut         = "RECIPIENT_OPTED_OUT"
	CodeDailyLimitReached         = "DAILY_LIMIT_REACHED"
	CodeRateLimited               = "RATE_LIMITED"
	CodeMethodNotAllowed          = "METHOD_NOT_ALLOWED"
	CodeInternal                  = "INTERNAL"
)

// Error is an answer of the API other than 2xx: its RFC 9457 problem
// document. Code is stable and meant for programs; Detail is for people.
type Error struct {
	StatusCode int          `json:"status"`
	Code       string       `json:"code"`
	Title      string       `json:"title"`
	Detail     string       `json:"detail"`
	RequestID  string       `json:"requestId"`
	Fields     []FieldError `json:"errors"`
	// RetryAfter is the server's Retry-After on 429 RATE_LIMITED.
	RetryAfter time.Duration `json:"-"`
}

// FieldError names one invalid field of a request ("to", "recipients[3]").
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

func (e *Error) Error() string {
	s := "msgsvc: " + strconv.Itoa(e.StatusCode) + " " + e.Code
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	for i, f := range e.Fields {
		if i == 0 {
			s += " ("
		} else {
			s += "; "
		}
		s += f.Field + " " + f.Message
		if i == len(e.Fields)-1 {
			s += ")"
		}
	}
	if e.RequestID != "" {
		s += " [request " + e.RequestID + "]"
	}
	return s
}

// HasCode reports whether err is an API answer with the given code.
func HasCode(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// newError reads a problem answer. A body that is not one (a proxy's page)
// still gives an Error with the status.
func newError(resp *http.Response, raw []byte) *Error {
	e := &Error{}
	if json.Unmarshal(raw, e) != nil || e.Code == "" {
		e = &Error{Title: http.StatusText(resp.StatusCode), Detail: truncate(string(raw), 200)}
	}
	e.StatusCode = resp.StatusCode
	if e.RequestID == "" {
		e.RequestID = resp.Header.Get("X-Request-Id")
	}
	if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
		e.RetryAfter = time.Duration(secs) * time.Second
	}
	return e
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
