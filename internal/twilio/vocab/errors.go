package vocab

import (
	"strconv"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// Twilio's error numbers for why a message failed, by msgsvc's code.
// Unknown covers what Twilio has no closer number for.
var errorCodes = map[string]int{
	domain.CodeInvalidNumber:     21211, // invalid To
	domain.CodeNoRoute:           21612, // To not reachable
	domain.CodeInvalidSender:     21212, // invalid From
	domain.CodeMarketingOptedOut: 21610, // recipient unsubscribed
	domain.CodeExpired:           30001, // Twilio fails a message past its ValidityPeriod with 30001
	domain.CodeUndelivered:       30003, // unreachable handset
	domain.CodeRejected:          30007, // filtered by the carrier
	domain.CodeMediaError:        11200, // media could not be fetched
	domain.CodeOutsideWindow:     63016, // WhatsApp: outside the 24-hour window
	domain.CodeFraudSuspected:    30450, // Twilio's SMS pumping protection blocked it
	domain.CodeProviderError:     30008,
	domain.CodeUnknown:           30008,
	domain.CodeRCSNotSupported:   30008,
	domain.CodeTemplateError:     30008,
	domain.CodeDeleted:           30008,
}

// unknownError is Twilio's "unknown error".
const unknownError = 30008

// ErrorCode is Twilio's error number for a message in status (its own or
// a step's), as the resource's error_code and a callback's ErrorCode: 0
// unless Twilio would call it failed or undelivered.
func ErrorCode(m domain.Message, status string) int {
	if status != Failed && status != Undelivered {
		return 0
	}
	if c, ok := errorCodes[m.ErrorCode]; ok {
		return c
	}
	return unknownError
}

// ErrorCodeText is ErrorCode as a form value: "" for none.
func ErrorCodeText(m domain.Message, status string) string {
	if c := ErrorCode(m, status); c != 0 {
		return strconv.Itoa(c)
	}
	return ""
}
