package twilio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/intake"
	"github.com/msgsvc/msgsvc/internal/message"
)

// Error is an answer in Twilio's error shape. Code is Twilio's own code
// for the problem wherever Twilio has one (docs/twilio.md lists every code
// this front answers with and when), so that the SDKs raise the exception
// a customer's code already handles.
type Error struct {
	Status  int
	Code    int
	Message string
}

func (e *Error) Error() string { return strconv.Itoa(e.Code) + ": " + e.Message }

// Twilio's codes that this front answers with.
const (
	codeInvalidParameter  = 20001
	codeAuth              = 20003
	codeMethodNotAllowed  = 20004
	codeAccountNotActive  = 20005
	codeAccountSuspended  = 10001
	codeForbidden         = 20403
	codeNotFound          = 20404
	codeTooManyRequests   = 20429
	codeInternal          = 20500
	codeUnavailable       = 20503
	codeInvalidTo         = 21211
	codeInvalidFrom       = 21212
	codeInvalidURL        = 21402
	codeRegionNotEnabled  = 21408
	codeNoBody            = 21602
	codeFromRequired      = 21603
	codeToRequired        = 21604
	codeFromNotOwned      = 21606
	codeStatusCallback    = 21609
	codeOptedOut          = 21610
	codeUnreachable       = 21612
	codeNotMobile         = 21614
	codeBodyTooLong       = 21617
	codeInvalidMediaURL   = 21620
	codeNoMMS             = 21621
	codeTooManyMedia      = 21623
	codeServiceNotFound   = 21701
	codeChannelMismatch   = 21910
	codeNotCancelable     = 30409
	codeSendAt            = 35114
	codeOutsideWindow     = 63016
	codeInvalidValidity   = 90007
	moreInfoBase          = "https://www.twilio.com/docs/errors/"
	maxMessageChars       = 1000
	unavailableRetryAfter = "5"
)

func fail(status, code int, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

func badRequest(code int, format string, args ...any) *Error {
	return fail(http.StatusBadRequest, code, format, args...)
}

var (
	errAuth = fail(http.StatusUnauthorized, codeAuth,
		"Authenticate: send the AccountSid and its AuthToken (or an API key's SID and secret) with HTTP Basic authentication.")
	errNotFound = fail(http.StatusNotFound, codeNotFound,
		"The requested resource was not found.")
	errIPBlocked = fail(http.StatusForbidden, codeForbidden,
		"This address is not on the account's IP allow-list.")
	// Twilio answers 10001 (Account is not active) for a suspended account
	// or subaccount, a parent's suspension included; 403 because the
	// credential itself is good.
	errSuspended = fail(http.StatusForbidden, codeAccountSuspended,
		"Account is not active: the account, or one above it, is suspended. Its queued and scheduled messages are held until it is resumed.")
)

type errorBody struct {
	Code     int    `json:"code"`
	Message  string `json:"message"`
	MoreInfo string `json:"more_info"`
	Status   int    `json:"status"`
}

// toError is the answer to an error from any layer. A failure of our own
// becomes 20500 without its text, which only the log sees.
func toError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if v, ok := domain.IsValidation(err); ok {
		return fromValidation(v)
	}
	if rf := (*domain.Refusal)(nil); errors.As(err, &rf) {
		return fromRefusal(rf)
	}
	switch {
	case errors.Is(err, domain.ErrSuspended):
		return errSuspended
	case errors.Is(err, message.ErrNotFound):
		return errNotFound
	case errors.Is(err, intake.ErrInsufficientCredits):
		return badRequest(codeAccountNotActive, "The account's balance does not cover the cost of this message.")
	case errors.Is(err, message.ErrNotCancelable):
		return badRequest(codeNotCancelable, "This message cannot be canceled: it was already handed to a carrier or has ended.")
	case errors.Is(err, message.ErrHandingOver), errors.Is(err, domain.ErrStorageUnavailable):
		return fail(http.StatusServiceUnavailable, codeUnavailable, "The service cannot take this request right now; nothing was done. Retry shortly.")
	}
	return fail(http.StatusInternalServerError, codeInternal, "Something went wrong on our side.")
}

// fromRefusal maps a channel rule's refusal.
func fromRefusal(rf *domain.Refusal) *Error {
	detail := rf.Detail
	switch rf.Code {
	case "RECIPIENT_OPTED_OUT":
		return badRequest(codeOptedOut, "Attempt to send to unsubscribed recipient: %s", detail)
	case "OUTSIDE_CONVERSATION_WINDOW":
		return badRequest(codeOutsideWindow, "Outside the allowed window for freeform WhatsApp messages: %s", detail)
	case "DESTINATION_NOT_ALLOWED":
		return badRequest(codeRegionNotEnabled, "Permission to send an SMS has not been enabled for the region indicated by the 'To' number: %s", detail)
	case "DAILY_LIMIT_REACHED":
		return fail(http.StatusTooManyRequests, codeTooManyRequests, "Daily limit of new WhatsApp conversations reached: %s", detail)
	}
	return badRequest(codeInvalidParameter, "%s", detail)
}

// fromValidation maps the core's field problems to the one code Twilio
// would answer: the first problem in the order Twilio checks its
// parameters (To, From, Body, media, the rest) decides, and the message
// names them all.
func fromValidation(v *domain.ValidationError) *Error {
	best, rank := 0, len(fieldOrder)+1
	for _, f := range v.Fields {
		code, r := fieldCode(f)
		if r < rank {
			best, rank = code, r
		}
	}
	if best == 0 {
		best = codeInvalidParameter
	}
	parts := make([]string, 0, len(v.Fields))
	for _, f := range v.Fields {
		parts = append(parts, paramName(f.Path)+" "+f.Message)
	}
	msg := strings.Join(parts, "; ")
	if msg == "" {
		msg = v.Error()
	}
	if len(msg) > maxMessageChars {
		msg = msg[:maxMessageChars]
	}
	return badRequest(best, "%s", msg)
}

// fieldOrder ranks the parameters as Twilio checks them.
var fieldOrder = []string{"recipients", "sender", "text", "content.media", "validity", "schedule", "callback"}

func fieldCode(f domain.FieldError) (int, int) {
	p := f.Path
	rank := len(fieldOrder)
	for i, prefix := range fieldOrder {
		if p == prefix || strings.HasPrefix(p, prefix+"[") || strings.HasPrefix(p, prefix+".") {
			rank = i
			break
		}
	}
	switch {
	case strings.HasPrefix(p, "recipients"):
		if f.Code == domain.FieldRequired {
			return codeToRequired, rank
		}
		return codeInvalidTo, rank
	case p == "sender":
		if f.Code == domain.FieldNotApproved {
			return codeFromNotOwned, rank
		}
		return codeInvalidFrom, rank
	case p == "text":
		if f.Code == domain.FieldRange {
			return codeBodyTooLong, rank
		}
		return codeNoBody, rank
	case strings.HasPrefix(p, "content.media"):
		if f.Code == domain.FieldUnavailable {
			return codeNoMMS, rank
		}
		return codeInvalidMediaURL, rank
	case p == "validity":
		return codeInvalidValidity, rank
	case p == "schedule":
		return codeSendAt, rank
	case p == "callback":
		return codeStatusCallback, rank
	}
	return codeInvalidParameter, rank
}

// paramName is the Twilio parameter a domain path came from.
func paramName(path string) string {
	switch {
	case strings.HasPrefix(path, "recipients"):
		return "To"
	case path == "sender":
		return "From"
	case path == "text":
		return "Body"
	case strings.HasPrefix(path, "content.media"):
		return "MediaUrl"
	case path == "validity":
		return "ValidityPeriod"
	case path == "schedule":
		return "SendAt"
	case path == "callback":
		return "StatusCallback"
	}
	return path
}

// writeError answers with e in Twilio's shape.
func writeError(w http.ResponseWriter, e *Error) {
	h := w.Header()
	switch e.Status {
	case http.StatusUnauthorized:
		h.Set("WWW-Authenticate", `Basic realm="Twilio API"`)
	case http.StatusServiceUnavailable:
		h.Set("Retry-After", unavailableRetryAfter)
	}
	writeJSON(w, e.Status, errorBody{Code: e.Code, Message: e.Message, MoreInfo: moreInfoBase + strconv.Itoa(e.Code), Status: e.Status})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the page links' "&" stay as written
	err := enc.Encode(v)
	body := b.Bytes()
	if err != nil {
		status = http.StatusInternalServerError
		body = []byte(`{"code":20500,"message":"Something went wrong on our side.","more_info":"` + moreInfoBase + `20500","status":500}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
