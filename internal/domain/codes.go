package domain

import "time"

// Error codes of failed messages, as webhooks and status queries show them.
const (
	CodeInvalidNumber   = "INVALID_NUMBER"
	CodeProviderError   = "PROVIDER_ERROR"
	CodeRCSNotSupported = "RCS_NOT_SUPPORTED"
	CodeExpired         = "EXPIRED"
	CodeNoRoute         = "NO_ROUTE"
	// CodeFraudSuspected: the fraud guard stopped the message (blocked,
	// or held and then rejected); it was refunded in full.
	CodeFraudSuspected = "FRAUD_SUSPECTED"
	// From carriers' delivery receipts (SMPP).
	CodeUndelivered   = "UNDELIVERED"
	CodeRejected      = "REJECTED"
	CodeDeleted       = "DELETED"
	CodeUnknown       = "UNKNOWN"
	CodeInvalidSender = "INVALID_SENDER"
	// From messaging platforms (WhatsApp).
	CodeOutsideWindow     = "OUTSIDE_CONVERSATION_WINDOW"
	CodeMarketingOptedOut = "MARKETING_OPTED_OUT"
	CodeTemplateError     = "TEMPLATE_ERROR"
	CodeMediaError        = "MEDIA_ERROR"
)

// ErrorText is the default explanation of an error code, used when a
// provider gives none.
func ErrorText(code string) string {
	switch code {
	case CodeInvalidNumber:
		return "the recipient number does not exist or cannot receive messages"
	case CodeRCSNotSupported:
		return "the recipient's device does not support RCS"
	case CodeExpired:
		return "the message was not delivered within its validity period"
	case CodeNoRoute:
		return "no provider is configured for this channel and destination"
	case CodeFraudSuspected:
		return "the fraud guard stopped the message (see the decision on it); nothing was charged"
	case CodeUndelivered:
		return "the carrier could not deliver the message to the handset"
	case CodeRejected:
		return "the carrier refused the message"
	case CodeDeleted:
		return "the carrier deleted the message before delivering it"
	case CodeUnknown:
		return "the carrier reported an unknown final state"
	case CodeInvalidSender:
		return "the carrier refused the sender"
	case CodeOutsideWindow:
		return "the recipient has not written in the last 24 hours: only a template may be sent"
	case CodeMarketingOptedOut:
		return "the recipient has stopped marketing messages from this business"
	case CodeTemplateError:
		return "the platform refused the template: unknown, not approved, paused, or its parameters do not fit"
	case CodeMediaError:
		return "the platform could not fetch or use the media"
	}
	return "the provider could not deliver the message"
}

// TimeLayout is the one timestamp format of the API and webhooks: UTC with
// milliseconds (docs/api.md, webhooks).
const TimeLayout = "2006-01-02T15:04:05.000Z"

// FormatTime renders t in TimeLayout.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }
