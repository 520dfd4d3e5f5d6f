// Package dlr turns a message's final status into the delivery receipt an
// SMPP user's bind receives: the de facto text of SMPP 3.4 Appendix B and
// the message_state its TLV carries. The tracker writes receipts with the
// status change; the SMPP server sends them.
package dlr

import (
	"fmt"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
)

// Keep is how long a receipt waits for a bind to acknowledge it.
const Keep = 72 * time.Hour

// message_state values (SMPP 3.4 §5.3.2.35).
const (
	StateDelivered     = 2
	StateExpired       = 3
	StateDeleted       = 4
	StateUndeliverable = 5
	StateAccepted      = 6
	StateRejected      = 8
)

// ESMClassReceipt marks a deliver_sm as a delivery receipt.
const ESMClassReceipt = 0x04

// Wanted reports whether a status change from before to m's status owes the
// message's SMPP user a receipt: the first final status of a message
// submitted over SMPP that asked for one.
func Wanted(m domain.Message, before domain.Status) bool {
	return m.Content.SMPP != nil && m.Content.SMPP.Receipt && !before.Final() && m.Status.Final()
}

// Item is the receipt of m, final at at, queued for its SMPP user.
func Item(m domain.Message, at time.Time) domain.SMPPItem {
	stat, state, errCode := outcome(m)
	return domain.SMPPItem{ID: id.New(id.SMPPItem, at), UserID: m.Content.SMPP.User, AccountID: m.AccountID, Env: m.Env,
		MessageID: m.ID, Source: m.To, Dest: m.From, ESMClass: ESMClassReceipt,
		Text: Text(m.ID, state == StateDelivered, m.CreatedAt, at, stat, errCode, m.Body), State: state,
		CreatedAt: at, ExpiresAt: at.Add(Keep), NextAttemptAt: at}
}

// Text is the receipt text: id:… sub:001 dlvrd:… submit date:… done
// date:… stat:… err:… text:… with the first 20 characters of the message.
func Text(msgID string, delivered bool, submitted, done time.Time, stat string, errCode int, body string) string {
	dlvrd := "000"
	if delivered {
		dlvrd = "001"
	}
	r := []rune(body)
	if len(r) > 20 {
		r = r[:20]
	}
	return fmt.Sprintf("id:%s sub:001 dlvrd:%s submit date:%s done date:%s stat:%s err:%03d text:%s", msgID, dlvrd,
		submitted.UTC().Format("0601021504"), done.UTC().Format("0601021504"), stat, errCode, string(r))
}

// outcome is the stat word, message_state and err number of m's final
// status: READ is DELIVRD, CANCELED is DELETED, an expired message
// EXPIRED, one refused before any network took it REJECTD, any other
// failure UNDELIV.
func outcome(m domain.Message) (stat string, state, errCode int) {
	switch m.Status {
	case domain.Delivered, domain.Read:
		return "DELIVRD", StateDelivered, 0
	case domain.Canceled:
		return "DELETED", StateDeleted, 0
	}
	code := ErrNumber(m.ErrorCode)
	switch m.ErrorCode {
	case domain.CodeExpired:
		return "EXPIRED", StateExpired, code
	case domain.CodeRejected, domain.CodeInvalidNumber, domain.CodeInvalidSender, domain.CodeNoRoute:
		return "REJECTD", StateRejected, code
	}
	return "UNDELIV", StateUndeliverable, code
}

// ErrNumber is the err: number of a message's error code.
func ErrNumber(code string) int {
	switch code {
	case "":
		return 0
	case domain.CodeInvalidNumber:
		return 1
	case domain.CodeInvalidSender:
		return 2
	case domain.CodeRejected:
		return 3
	case domain.CodeExpired:
		return 4
	case domain.CodeNoRoute:
		return 5
	case domain.CodeUndelivered:
		return 6
	case domain.CodeProviderError:
		return 7
	}
	return 99
}
