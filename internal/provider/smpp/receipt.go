package smpp

import (
	"errors"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/pdu"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// receipt is a parsed delivery receipt. The text format is the de facto
// one of SMPP 3.4 Appendix B:
//
//	id:IIIIIIIIII sub:SSS dlvrd:DDD submit date:YYMMDDhhmm done date:YYMMDDhhmm stat:DDDDDDD err:E text:...
//
// Where the receipted_message_id and message_state TLVs are present they
// win over the text: the text's id is sometimes printed in another base than
// the submit_sm_resp id, and its stat words vary between vendors.
type receipt struct {
	ID       string
	Stat     string // the text's stat word, upper case
	State    pdu.MessageState
	HasState bool
	Err      string // the text's err field
	DoneDate string
}

// parseReceipt reads a deliver_sm that has the receipt bit of esm_class.
func parseReceipt(sm *pdu.SM) (receipt, error) {
	var r receipt
	fields := receiptFields(receiptText(sm))
	r.ID = fields[fieldID]
	r.Stat = strings.ToUpper(fields[fieldStat])
	r.Err = fields[fieldErr]
	r.DoneDate = fields[fieldDoneDate]
	if id, ok := sm.TLVs.CString(pdu.TagReceiptedMessageID); ok && id != "" {
		r.ID = id
	}
	if st, ok := sm.TLVs.Byte(pdu.TagMessageState); ok {
		r.State, r.HasState = pdu.MessageState(st), true
	}
	if r.ID == "" {
		return r, errors.New("receipt without a message id (no receipted_message_id, no id: in the text)")
	}
	if !r.HasState && r.Stat == "" {
		return r, errors.New("receipt without a state (no message_state, no stat: in the text)")
	}
	return r, nil
}

// receiptText is the receipt's text: short_message, or message_payload when
// the SMSC used that. Receipt texts are ASCII whatever data_coding says,
// except for the few SMSCs that send them in UCS-2.
func receiptText(sm *pdu.SM) string {
	b := sm.ShortMessage
	if len(b) == 0 {
		b, _ = sm.TLVs.Get(pdu.TagMessagePayload)
	}
	if sm.DataCoding == pdu.CodingUCS2 {
		return pdu.DecodeUserData(pdu.CodingUCS2, b, 0, pdu.Unpacked)
	}
	return pdu.DecodeLatin1(b)
}

// receiptKeys are a text receipt's fields before its text, each with its
// colon; receiptFields finds them by their index here.
var receiptKeys = [...]string{"id:", "sub:", "dlvrd:", "submit date:", "done date:", "stat:", "err:"}

const (
	fieldID       = 0
	fieldDoneDate = 4
	fieldStat     = 5
	fieldErr      = 6
)

// receiptFields splits the text into the values of receiptKeys, matched
// whatever their case. "text" comes last: it runs to the end and may
// contain anything, so the other keys are searched only before it. It
// allocates nothing but the lower-cased copy: a busy bind parses
// thousands of receipts a second.
func receiptFields(s string) (values [len(receiptKeys)]string) {
	lower := asciiLower(s)
	head := len(s)
	if i := keyAt(lower, "text:", 0, head); i >= 0 {
		head = i
	}
	type hit struct{ key, at, from int }
	var hits [len(receiptKeys)]hit
	n := 0
	for k, pat := range receiptKeys {
		i := keyAt(lower, pat, 0, head)
		if i < 0 {
			continue
		}
		// Keep the hits in the order they appear: each value runs to the
		// next key.
		j := n
		for ; j > 0 && hits[j-1].at > i; j-- {
			hits[j] = hits[j-1]
		}
		hits[j] = hit{key: k, at: i, from: i + len(pat)}
		n++
	}
	for i, h := range hits[:n] {
		end := head
		if i+1 < n {
			end = hits[i+1].at
		}
		if h.from <= end {
			values[h.key] = strings.TrimSpace(s[h.from:end])
		}
	}
	return values
}

// keyAt finds pat (a key and its colon) in s[from:to] at the start of a
// word.
func keyAt(s, pat string, from, to int) int {
	for i := from; i+len(pat) <= to; {
		j := strings.Index(s[i:to], pat)
		if j < 0 {
			return -1
		}
		at := i + j
		if at == 0 || s[at-1] == ' ' {
			return at
		}
		i = at + 1
	}
	return -1
}

// outcome maps a receipt to a final status. final is false for the states
// that are not an outcome (ENROUTE, ACCEPTD): the core waits for the next
// receipt. The mapping:
//
//	message_state / stat        Status     ErrorCode
//	2 DELIVERED / DELIVRD       DELIVERED  -
//	5 UNDELIVERABLE / UNDELIV   FAILED     UNDELIVERED
//	3 EXPIRED / EXPIRED         FAILED     EXPIRED
//	8 REJECTED / REJECTD        FAILED     REJECTED
//	4 DELETED / DELETED         FAILED     DELETED
//	7 UNKNOWN / UNKNOWN         FAILED     UNKNOWN
//	1 ENROUTE, 6 ACCEPTED       (not final)
//	anything else               FAILED     UNKNOWN
func (r receipt) outcome(at time.Time) (provider.Status, bool) {
	st := provider.Status{Ref: r.ID, At: at}
	state := r.State
	if !r.HasState {
		state = stateFromStat(r.Stat)
	}
	switch state {
	case pdu.StateEnroute, pdu.StateAccepted:
		return st, false
	case pdu.StateDelivered:
		st.Status = "DELIVERED"
		return st, true
	case pdu.StateUndeliverable:
		st.ErrorCode = "UNDELIVERED"
	case pdu.StateExpired:
		st.ErrorCode = "EXPIRED"
	case pdu.StateRejected:
		st.ErrorCode = "REJECTED"
	case pdu.StateDeleted:
		st.ErrorCode = "DELETED"
	default:
		st.ErrorCode = "UNKNOWN"
	}
	st.Status = "FAILED"
	st.ErrorMessage = r.describe()
	return st, true
}

func (r receipt) describe() string {
	var parts []string
	if r.Stat != "" {
		parts = append(parts, "stat:"+r.Stat)
	}
	if r.Err != "" {
		parts = append(parts, "err:"+r.Err)
	}
	return strings.Join(parts, " ")
}

// stateFromStat reads the stat word, accepting the long spellings some
// SMSCs use.
func stateFromStat(s string) pdu.MessageState {
	switch s {
	case "DELIVRD", "DELIVERED":
		return pdu.StateDelivered
	case "UNDELIV", "UNDELIVERABLE":
		return pdu.StateUndeliverable
	case "EXPIRED":
		return pdu.StateExpired
	case "REJECTD", "REJECTED":
		return pdu.StateRejected
	case "DELETED":
		return pdu.StateDeleted
	case "ENROUTE":
		return pdu.StateEnroute
	case "ACCEPTD", "ACCEPTED":
		return pdu.StateAccepted
	}
	return pdu.StateUnknown
}

// asciiLower lower-cases ASCII letters only, so that offsets in the result
// are offsets in s (strings.ToLower may change the length of other text).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
