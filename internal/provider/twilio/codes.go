package twilio

import (
	"strconv"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider/httpcall"
)

// codes maps Twilio's error codes, in an API answer or in a status
// callback's ErrorCode, to ours. Codes not listed are REJECTED in an
// answer, and UNDELIVERED (undelivered) or REJECTED (failed) in a
// callback.
//
//	Twilio code                                            errorCode
//	21211 invalid To, 21614 not a mobile number,           INVALID_NUMBER
//	  21401 invalid phone number, 30005 unknown
//	  destination, 30006 landline or unreachable carrier
//	21212 invalid From, 21606 From not SMS capable,        INVALID_SENDER
//	  21659 From not a Twilio number, 21660 From
//	  not the account's, 21703 service has no sender,
//	  30032 toll-free not verified, 30034 10DLC
//	  unregistered
//	30003 unreachable handset, 30008 unknown error         UNDELIVERED
//	30001 queue overflow, 30009 missing segment            UNDELIVERED
//	30004 message blocked, 30007 carrier filtering,        REJECTED
//	  21610 recipient replied STOP, 21408 region not
//	  enabled, 21612 cannot route, 21617 too long
//	21620 bad media URL, 11200 media fetch failed,         MEDIA_ERROR
//	  12300 bad media content type, 30019 media too big
//	30002 account suspended                                PROVIDER_ERROR (temporary in an answer)
//	20429, 14107 rate limits                               PROVIDER_ERROR (temporary)
var codes = httpcall.Codes[int]{Ours: map[int]string{
	21211: domain.CodeInvalidNumber, 21614: domain.CodeInvalidNumber, 21401: domain.CodeInvalidNumber,
	30005: domain.CodeInvalidNumber, 30006: domain.CodeInvalidNumber,
	21212: domain.CodeInvalidSender, 21606: domain.CodeInvalidSender, 21659: domain.CodeInvalidSender,
	21660: domain.CodeInvalidSender, 21703: domain.CodeInvalidSender, 30032: domain.CodeInvalidSender,
	30034: domain.CodeInvalidSender,
	30003: domain.CodeUndelivered, 30008: domain.CodeUndelivered, 30001: domain.CodeUndelivered, 30009: domain.CodeUndelivered,
	30004: domain.CodeRejected, 30007: domain.CodeRejected, 21610: domain.CodeRejected, 21408: domain.CodeRejected,
	21612: domain.CodeRejected, 21617: domain.CodeRejected,
	21620: domain.CodeMediaError, 11200: domain.CodeMediaError, 12300: domain.CodeMediaError, 30019: domain.CodeMediaError,
}, Temporary: map[int]bool{30002: true, 20429: true, 14107: true, 20500: true, 20503: true}}

// statusOf maps a status callback's MessageStatus. ok is false for the
// states that are not reports (queued, accepted, scheduled, sending,
// receiving, received, partially_delivered).
//
//	MessageStatus   status     errorCode
//	sent            SENT
//	delivered       DELIVERED
//	read            READ
//	undelivered     FAILED     by ErrorCode, else UNDELIVERED
//	failed          FAILED     by ErrorCode, else REJECTED
//	canceled        FAILED     DELETED
func statusOf(messageStatus, errorCode string) (st domain.Status, code string, ok bool) {
	switch messageStatus {
	case "sent":
		return domain.Sent, "", true
	case "delivered":
		return domain.Delivered, "", true
	case "read":
		return domain.Read, "", true
	case "undelivered":
		return domain.Failed, callbackCode(errorCode, domain.CodeUndelivered), true
	case "failed":
		return domain.Failed, callbackCode(errorCode, domain.CodeRejected), true
	case "canceled":
		return domain.Failed, domain.CodeDeleted, true
	}
	return "", "", false
}

func callbackCode(errorCode, def string) string {
	n, err := strconv.Atoi(errorCode)
	if err != nil {
		return def
	}
	return codes.Of(n, def)
}
