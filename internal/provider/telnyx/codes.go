package telnyx

import (
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider/httpcall"
)

// codes maps Telnyx's messaging error codes, in an API answer or in
// a webhook's errors, to ours. Codes not listed are REJECTED in an answer,
// and UNDELIVERED (delivery_failed) or REJECTED (sending_failed) in a
// webhook.
//
//	Telnyx code                                            errorCode
//	40001 not routable, 40012 invalid destination,         INVALID_NUMBER
//	  40310 invalid to address
//	40010 not 10DLC registered, 40013 invalid source,      INVALID_SENDER
//	  40305 invalid from address, 40311 invalid
//	  messaging profile
//	40006 recipient server unavailable, 40008              UNDELIVERED
//	  undeliverable
//	40005 expired during transmission                      EXPIRED
//	40002, 40003 blocked as spam, 40004 rejected by        REJECTED
//	  destination, 40009 invalid body, 40300 recipient
//	  replied STOP
//	10007 unexpected error, 40011 too many requests        PROVIDER_ERROR (temporary in an answer)
var codes = httpcall.Codes[string]{Ours: map[string]string{
	"40001": domain.CodeInvalidNumber, "40012": domain.CodeInvalidNumber, "40310": domain.CodeInvalidNumber,
	"40010": domain.CodeInvalidSender, "40013": domain.CodeInvalidSender, "40305": domain.CodeInvalidSender,
	"40311": domain.CodeInvalidSender,
	"40006": domain.CodeUndelivered, "40008": domain.CodeUndelivered,
	"40005": domain.CodeExpired,
	"40002": domain.CodeRejected, "40003": domain.CodeRejected, "40004": domain.CodeRejected, "40009": domain.CodeRejected,
	"40300": domain.CodeRejected,
}, Temporary: map[string]bool{"10007": true, "40011": true}}

// statusOf maps a recipient's status in message.sent and
// message.finalized. ok is false for the states that are not reports
// (queued, sending, webhook_delivered).
//
//	status                 status     errorCode
//	sent                   SENT
//	delivery_unconfirmed   SENT       (the carrier sent no receipt)
//	delivered              DELIVERED
//	sending_failed         FAILED     by the error's code, else REJECTED
//	delivery_failed        FAILED     by the error's code, else UNDELIVERED
//	expired                FAILED     EXPIRED
func statusOf(status, errorCode string) (st domain.Status, code string, ok bool) {
	mapped := func(def string) string { return codes.Of(errorCode, def) }
	switch status {
	case "sent", "delivery_unconfirmed":
		return domain.Sent, "", true
	case "delivered":
		return domain.Delivered, "", true
	case "sending_failed":
		return domain.Failed, mapped(domain.CodeRejected), true
	case "delivery_failed":
		return domain.Failed, mapped(domain.CodeUndelivered), true
	case "expired":
		return domain.Failed, domain.CodeExpired, true
	}
	return "", "", false
}
