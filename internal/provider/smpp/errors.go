package smpp

import (
	"errors"
	"fmt"

	"github.com/msgsvc/msgsvc/internal/pdu"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// Error codes this provider reports in provider.Error.Code, besides those of
// the contract (INVALID_NUMBER, PROVIDER_ERROR, EXPIRED).
const (
	CodeInvalidNumber = "INVALID_NUMBER"
	CodeInvalidSender = "INVALID_SENDER"
	CodeRejected      = "REJECTED"
	CodeProviderError = "PROVIDER_ERROR"
	CodeExpired       = "EXPIRED"
)

// Session errors. A request that failed with errNotSent or errConnLost got
// no response, so it is sent again (on another bind or after a reconnect);
// one that got a response, even an unreadable one, never is.
var (
	errNotSent  = errors.New("smpp: request not sent: session is closed")
	errConnLost = errors.New("smpp: connection lost before the response")
	errTimeout  = errors.New("smpp: no response within the request timeout")
	errNoBind   = errors.New("smpp: no bind up to the SMSC")
)

// noBind is errNoBind with the last connection error, which says why.
func noBind(last string) error {
	if last == "" {
		return errNoBind
	}
	return fmt.Errorf("%w (last error: %s)", errNoBind, last)
}

// statusError maps a submit_sm_resp command_status to a provider error:
//
//	command_status                                        Temporary  Code
//	ESME_RTHROTTLED 0x58, ESME_RMSGQFUL 0x14,             yes        PROVIDER_ERROR
//	ESME_RSYSERR 0x08, ESME_RX_T_APPN 0x64,
//	ESME_RINVBNDSTS 0x04 (the SMSC lost our bind)
//	ESME_RINVDSTADR 0x0B, ESME_RINVDSTTON 0x50,           no         INVALID_NUMBER
//	ESME_RINVDSTNPI 0x51
//	ESME_RINVSRCADR 0x0A, ESME_RINVSRCTON 0x48,           no         INVALID_SENDER
//	ESME_RINVSRCNPI 0x49
//	ESME_RX_P_APPN 0x65, ESME_RX_R_APPN 0x66, and the     no         REJECTED
//	message-format errors: ESME_RINVMSGLEN 0x01,
//	ESME_RINVESMCLASS 0x43, ESME_RINVSERTYP 0x15,
//	ESME_RINVPRTFLG 0x06, ESME_RINVREGDLVFLG 0x07,
//	ESME_RINVSCHED 0x61, ESME_RINVEXPIRY 0x62,
//	ESME_RINVOPTPARSTREAM 0xC0 .. ESME_RINVPARLEN 0xC2
//	anything else (ESME_RSUBMITFAIL, vendor codes, ...)   no         PROVIDER_ERROR
//
// The message names the status, so that operators see the SMSC's reason.
func statusError(st pdu.Status) *provider.Error {
	e := &provider.Error{Code: CodeProviderError, Message: fmt.Sprintf("SMSC answered %s (0x%02x)", st, uint32(st))}
	switch st {
	case pdu.StatusThrottled, pdu.StatusMsgQFul, pdu.StatusSysErr, pdu.StatusXTAppn, pdu.StatusInvBndSts:
		e.Temporary = true
	case pdu.StatusInvDstAdr, pdu.StatusInvDstTON, pdu.StatusInvDstNPI:
		e.Code = CodeInvalidNumber
	case pdu.StatusInvSrcAdr, pdu.StatusInvSrcTON, pdu.StatusInvSrcNPI:
		e.Code = CodeInvalidSender
	case pdu.StatusXPAppn, pdu.StatusXRAppn, pdu.StatusInvMsgLen, pdu.StatusInvESMClass, pdu.StatusInvSerTyp, pdu.StatusInvPrtFlg,
		pdu.StatusInvRegDlvFlg, pdu.StatusInvSched, pdu.StatusInvExpiry, pdu.StatusInvOptParStream, pdu.StatusOptParNotAllwd,
		pdu.StatusInvParLen:
		e.Code = CodeRejected
	}
	return e
}

// transient is a temporary provider error for failures that are not an
// SMSC's answer (timeouts, lost connections, no bind).
func transient(err error) *provider.Error {
	return &provider.Error{Code: CodeProviderError, Message: err.Error(), Temporary: true}
}

// permanent is a permanent provider error with its own code.
func permanent(code, format string, args ...any) *provider.Error {
	return &provider.Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// BindError is a bind_transceiver refused by the SMSC.
type BindError struct {
	Status pdu.Status
}

func (e *BindError) Error() string { return "smpp: bind refused: " + e.Status.String() }
