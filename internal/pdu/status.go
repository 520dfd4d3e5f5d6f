package pdu

import "fmt"

// Status is a command_status value (SMPP 3.4 §5.1.3).
type Status uint32

// The command_status values this package names. Others print as hex.
const (
	StatusOK              Status = 0x00  // ESME_ROK
	StatusInvMsgLen       Status = 0x01  // ESME_RINVMSGLEN
	StatusInvCmdLen       Status = 0x02  // ESME_RINVCMDLEN
	StatusInvCmdID        Status = 0x03  // ESME_RINVCMDID
	StatusInvBndSts       Status = 0x04  // ESME_RINVBNDSTS
	StatusAlyBnd          Status = 0x05  // ESME_RALYBND
	StatusInvPrtFlg       Status = 0x06  // ESME_RINVPRTFLG
	StatusInvRegDlvFlg    Status = 0x07  // ESME_RINVREGDLVFLG
	StatusSysErr          Status = 0x08  // ESME_RSYSERR
	StatusInvSrcAdr       Status = 0x0A  // ESME_RINVSRCADR
	StatusInvDstAdr       Status = 0x0B  // ESME_RINVDSTADR
	StatusInvMsgID        Status = 0x0C  // ESME_RINVMSGID
	StatusBindFail        Status = 0x0D  // ESME_RBINDFAIL
	StatusInvPaswd        Status = 0x0E  // ESME_RINVPASWD
	StatusInvSysID        Status = 0x0F  // ESME_RINVSYSID
	StatusMsgQFul         Status = 0x14  // ESME_RMSGQFUL
	StatusInvSerTyp       Status = 0x15  // ESME_RINVSERTYP
	StatusInvESMClass     Status = 0x43  // ESME_RINVESMCLASS
	StatusSubmitFail      Status = 0x45  // ESME_RSUBMITFAIL
	StatusInvSrcTON       Status = 0x48  // ESME_RINVSRCTON
	StatusInvSrcNPI       Status = 0x49  // ESME_RINVSRCNPI
	StatusInvDstTON       Status = 0x50  // ESME_RINVDSTTON
	StatusInvDstNPI       Status = 0x51  // ESME_RINVDSTNPI
	StatusInvSysTyp       Status = 0x53  // ESME_RINVSYSTYP
	StatusThrottled       Status = 0x58  // ESME_RTHROTTLED
	StatusInvSched        Status = 0x61  // ESME_RINVSCHED
	StatusInvExpiry       Status = 0x62  // ESME_RINVEXPIRY
	StatusQueryFail       Status = 0x67  // ESME_RQUERYFAIL
	StatusXTAppn          Status = 0x64  // ESME_RX_T_APPN: temporary application error
	StatusXPAppn          Status = 0x65  // ESME_RX_P_APPN: permanent application error
	StatusXRAppn          Status = 0x66  // ESME_RX_R_APPN: application rejected
	StatusInvOptParStream Status = 0xC0  // ESME_RINVOPTPARSTREAM
	StatusOptParNotAllwd  Status = 0xC1  // ESME_ROPTPARNOTALLWD
	StatusInvParLen       Status = 0xC2  // ESME_RINVPARLEN
	StatusDeliveryFailure Status = 0xFE  // ESME_RDELIVERYFAILURE
	StatusInvDCS          Status = 0x104 // ESME_RINVDCS: invalid data_coding
	StatusUnknownErr      Status = 0xFF  // ESME_RUNKNOWNERR
)

func (s Status) String() string {
	switch s {
	case StatusOK:
		return "ESME_ROK"
	case StatusInvMsgLen:
		return "ESME_RINVMSGLEN"
	case StatusInvCmdLen:
		return "ESME_RINVCMDLEN"
	case StatusInvCmdID:
		return "ESME_RINVCMDID"
	case StatusInvBndSts:
		return "ESME_RINVBNDSTS"
	case StatusAlyBnd:
		return "ESME_RALYBND"
	case StatusInvPrtFlg:
		return "ESME_RINVPRTFLG"
	case StatusInvRegDlvFlg:
		return "ESME_RINVREGDLVFLG"
	case StatusSysErr:
		return "ESME_RSYSERR"
	case StatusInvSrcAdr:
		return "ESME_RINVSRCADR"
	case StatusInvDstAdr:
		return "ESME_RINVDSTADR"
	case StatusInvMsgID:
		return "ESME_RINVMSGID"
	case StatusBindFail:
		return "ESME_RBINDFAIL"
	case StatusInvPaswd:
		return "ESME_RINVPASWD"
	case StatusInvSysID:
		return "ESME_RINVSYSID"
	case StatusMsgQFul:
		return "ESME_RMSGQFUL"
	case StatusInvSerTyp:
		return "ESME_RINVSERTYP"
	case StatusInvESMClass:
		return "ESME_RINVESMCLASS"
	case StatusSubmitFail:
		return "ESME_RSUBMITFAIL"
	case StatusInvSrcTON:
		return "ESME_RINVSRCTON"
	case StatusInvSrcNPI:
		return "ESME_RINVSRCNPI"
	case StatusInvDstTON:
		return "ESME_RINVDSTTON"
	case StatusInvDstNPI:
		return "ESME_RINVDSTNPI"
	case StatusInvSysTyp:
		return "ESME_RINVSYSTYP"
	case StatusThrottled:
		return "ESME_RTHROTTLED"
	case StatusInvSched:
		return "ESME_RINVSCHED"
	case StatusInvExpiry:
		return "ESME_RINVEXPIRY"
	case StatusQueryFail:
		return "ESME_RQUERYFAIL"
	case StatusXTAppn:
		return "ESME_RX_T_APPN"
	case StatusXPAppn:
		return "ESME_RX_P_APPN"
	case StatusXRAppn:
		return "ESME_RX_R_APPN"
	case StatusInvOptParStream:
		return "ESME_RINVOPTPARSTREAM"
	case StatusOptParNotAllwd:
		return "ESME_ROPTPARNOTALLWD"
	case StatusInvParLen:
		return "ESME_RINVPARLEN"
	case StatusDeliveryFailure:
		return "ESME_RDELIVERYFAILURE"
	case StatusInvDCS:
		return "ESME_RINVDCS"
	case StatusUnknownErr:
		return "ESME_RUNKNOWNERR"
	}
	return fmt.Sprintf("command_status 0x%08x", uint32(s))
}
