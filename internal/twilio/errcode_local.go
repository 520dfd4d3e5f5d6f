package twilio

import (
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/twilio/vocab"
)

// errorCode is Twilio's error number of a failed message (0 otherwise).
// The callbacks' branch brings one shared mapping in vocab; until it is
// merged this is the front's.
func errorCode(m domain.Message, status string) int {
	if status != vocab.Failed && status != vocab.Undelivered {
		return 0
	}
	switch m.ErrorCode {
	case domain.CodeInvalidNumber:
		return codeInvalidTo
	case domain.CodeNoRoute:
		return codeUnreachable
	case domain.CodeInvalidSender:
		return codeInvalidFrom
	case domain.CodeMarketingOptedOut:
		return codeOptedOut
	case domain.CodeExpired:
		return 30001
	case domain.CodeUndelivered:
		return 30003
	case domain.CodeRejected:
		return 30007
	case domain.CodeMediaError:
		return 11200
	case domain.CodeOutsideWindow:
		return codeOutsideWindow
	}
	return 30008
}
