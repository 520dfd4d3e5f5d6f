package whatsapp

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// graphError is the platform's error object: {"error": {...}} in answers,
// and the items of "errors" in failed statuses and unsupported messages.
type graphError struct {
	Message   string `json:"message"`
	Type      string `json:"type"`
	Code      int    `json:"code"`
	Subcode   int    `json:"error_subcode"`
	Title     string `json:"title"`
	UserTitle string `json:"error_user_title"`
	Transient bool   `json:"is_transient"`
	Data      struct {
		Details string `json:"details"`
	} `json:"error_data"`
	TraceID string `json:"fbtrace_id"`
}

// text is the platform's explanation, for errorMessage and the logs.
func (g graphError) text() string {
	what := g.Title
	if what == "" {
		what = g.Message
	}
	if g.Data.Details != "" && g.Data.Details != what {
		what += ": " + g.Data.Details
	}
	return fmt.Sprintf("WhatsApp error %d: %s", g.Code, what)
}

// kind is what an error means for the adapter.
type kind int

const (
	refused   kind = iota // this message cannot go: permanent, with its code
	transient             // the platform is struggling: try again soon
	throttled             // a rate limit: try again, later than for transient
	down                  // the token or the account is broken: no retry helps until an operator acts
)

// failure is a classified error.
type failure struct {
	err  *provider.Error
	kind kind
}

// codeKinds maps the platform's error codes to their meaning. Codes not
// listed are refusals with REJECTED (a 4xx) or transient (a 5xx).
//
//	code                                      kind       errorCode
//	190 token expired/invalid, 102, 10,       down       PROVIDER_ERROR (health: down)
//	  200-299 permissions, 131005 access
//	  denied, 131031 account locked, 131042
//	  payment issue, 133010 number not
//	  registered, 368 blocked for policy
//	4, 80007, 130429, 131048, 131056          throttled  PROVIDER_ERROR (retried with backoff)
//	1, 2, 131000, 131016, 133004, 131057      transient  PROVIDER_ERROR (retried with backoff)
//	131047 re-engagement (24-hour window)     refused    OUTSIDE_CONVERSATION_WINDOW
//	131026 undeliverable (not on WhatsApp)    refused    INVALID_NUMBER
//	131050 stopped marketing messages         refused    MARKETING_OPTED_OUT
//	131049, 130472 not delivered by Meta      refused    UNDELIVERED
//	131052, 131053 media download/upload      refused    MEDIA_ERROR
//	132000-132069 template problems           refused    TEMPLATE_ERROR
//	anything else (100, 131008, 131009,       refused    REJECTED
//	  131021, 131030, 131051, ...)
var codeKinds = map[int]struct {
	kind kind
	code string
}{
	190: {down, ""}, 102: {down, ""}, 10: {down, ""}, 131005: {down, ""}, 131031: {down, ""},
	131042: {down, ""}, 133010: {down, ""}, 368: {down, ""},
	4: {throttled, ""}, 80007: {throttled, ""}, 130429: {throttled, ""}, 131048: {throttled, ""}, 131056: {throttled, ""},
	1: {transient, ""}, 2: {transient, ""}, 131000: {transient, ""}, 131016: {transient, ""}, 133004: {transient, ""},
	131057: {transient, ""},
	131047: {refused, domain.CodeOutsideWindow},
	131026: {refused, domain.CodeInvalidNumber},
	131050: {refused, domain.CodeMarketingOptedOut},
	131049: {refused, domain.CodeUndelivered}, 130472: {refused, domain.CodeUndelivered},
	131052: {refused, domain.CodeMediaError}, 131053: {refused, domain.CodeMediaError},
}

// classify maps a platform error (with the HTTP status of its answer, or 0
// for one reported in a status notification).
func classify(status int, g graphError) failure {
	msg := g.text()
	k, ok := codeKinds[g.Code]
	switch {
	case ok:
	case g.Code >= 200 && g.Code <= 299:
		k.kind = down
	case g.Code >= 132000 && g.Code <= 132069:
		k = struct {
			kind kind
			code string
		}{refused, domain.CodeTemplateError}
	case status == http.StatusUnauthorized || status == http.StatusForbidden && g.Code == 0:
		k.kind = down
	case status == http.StatusTooManyRequests:
		k.kind = throttled
	case status >= 500 || g.Transient:
		k.kind = transient
	default:
		k.code = domain.CodeRejected
	}
	if k.kind != refused {
		return failure{&provider.Error{Code: domain.CodeProviderError, Message: msg, Temporary: true}, k.kind}
	}
	return failure{&provider.Error{Code: k.code, Message: msg}, refused}
}

// answerError reads a non-2xx answer: the Graph error object when there is
// one, else the HTTP status.
func answerError(status int, body []byte) failure {
	var env struct {
		Error *graphError `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil || env.Error == nil {
		g := graphError{Message: fmt.Sprintf("HTTP %d %s", status, http.StatusText(status))}
		if snippet := strings.TrimSpace(string(body)); snippet != "" {
			g.Data.Details = truncate(snippet, 200)
		}
		return classify(status, g)
	}
	return classify(status, *env.Error)
}

// statusErrorCode is the errorCode of a failed status notification: the
// platform has given up on the message, so even a code that is transient
// in an answer ends it.
func statusErrorCode(g graphError) (code, message string) {
	f := classify(0, g)
	return f.err.Code, f.err.Message
}

// transportError is a request that got no answer (connection refused or
// reset, timeout): transient.
func transportError(err error) failure {
	msg := err.Error()
	var ue interface{ Timeout() bool }
	if errors.As(err, &ue) && ue.Timeout() {
		msg = "no answer within the request timeout"
	}
	return failure{&provider.Error{Code: domain.CodeProviderError, Message: "WhatsApp request failed: " + msg, Temporary: true}, transient}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
