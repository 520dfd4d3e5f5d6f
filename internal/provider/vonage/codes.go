package vonage

import (
	"strings"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider/httpcall"
)

// sendCodes map a non-zero status of the SMS API's answer.
//
//	status                                                 errorCode
//	1 throttled, 5 internal error, 10 too many binds       PROVIDER_ERROR (temporary)
//	4 invalid credentials, 8 account barred, 9 no credit,  PROVIDER_ERROR (temporary; health: down)
//	  11 account not enabled for HTTP, 14 invalid signature
//	6 invalid message (unknown prefix), 22 invalid         INVALID_NUMBER
//	  network code, 33 number de-activated
//	15 invalid sender address                              INVALID_SENDER
//	2, 3, 7, 12, 23, 29, 32 and any other                  REJECTED
var sendCodes = httpcall.Codes[string]{
	Ours: map[string]string{"6": domain.CodeInvalidNumber, "22": domain.CodeInvalidNumber, "33": domain.CodeInvalidNumber,
		"15": domain.CodeInvalidSender},
	Temporary:   map[string]bool{"1": true, "5": true, "10": true},
	Credentials: map[string]bool{"4": true, "8": true, "9": true, "11": true, "14": true},
}

// receiptCodes map a delivery receipt's err-code.
//
//	err-code                                               errorCode
//	3 absent subscriber (permanent), 5 portability         INVALID_NUMBER
//	  error, 9 illegal number, 11 unroutable
//	2 absent subscriber (temporary), 7 handset busy,       UNDELIVERED
//	  8 network error, 12 destination unreachable
//	4 call barred by user, 6 anti-spam, 10 illegal         REJECTED
//	  message, 13 age restriction, 14 blocked by
//	  carrier, 15 prepaid out of funds, 50-54 filters
//	1 unknown, 99 general error                            UNKNOWN
var receiptCodes = httpcall.Codes[string]{Ours: map[string]string{
	"3": domain.CodeInvalidNumber, "5": domain.CodeInvalidNumber, "9": domain.CodeInvalidNumber, "11": domain.CodeInvalidNumber,
	"2": domain.CodeUndelivered, "7": domain.CodeUndelivered, "8": domain.CodeUndelivered, "12": domain.CodeUndelivered,
	"4": domain.CodeRejected, "6": domain.CodeRejected, "10": domain.CodeRejected, "13": domain.CodeRejected,
	"14": domain.CodeRejected, "15": domain.CodeRejected, "50": domain.CodeRejected, "51": domain.CodeRejected,
	"52": domain.CodeRejected, "53": domain.CodeRejected, "54": domain.CodeRejected,
	"1": domain.CodeUnknown, "99": domain.CodeUnknown,
}}

// statusOf maps a delivery receipt's status.
//
//	status              status     errorCode
//	accepted, buffered  SENT
//	delivered           DELIVERED
//	expired             FAILED     EXPIRED
//	failed              FAILED     by err-code, else UNDELIVERED
//	rejected            FAILED     by err-code, else REJECTED
//	unknown             FAILED     UNKNOWN
func statusOf(status, errCode string) (st domain.Status, code string, ok bool) {
	mapped := func(def string) string { return receiptCodes.Of(errCode, def) }
	switch strings.ToLower(status) {
	case "accepted", "buffered":
		return domain.Sent, "", true
	case "delivered":
		return domain.Delivered, "", true
	case "expired":
		return domain.Failed, domain.CodeExpired, true
	case "failed":
		return domain.Failed, mapped(domain.CodeUndelivered), true
	case "rejected":
		return domain.Failed, mapped(domain.CodeRejected), true
	case "unknown":
		return domain.Failed, domain.CodeUnknown, true
	}
	return "", "", false
}

// gsmChars are the GSM 03.38 default alphabet and its extension table:
// text of these alone goes as type text, anything else as unicode.
const gsmChars = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà" +
	"\f^{}\\[~]|€"

func gsm(s string) bool {
	for _, r := range s {
		if !strings.ContainsRune(gsmChars, r) {
			return false
		}
	}
	return true
}
