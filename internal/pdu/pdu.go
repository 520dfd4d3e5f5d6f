package pdu

import "fmt"

// CommandID identifies a PDU type (SMPP 3.4 §5.1.2.1). Responses have the
// high bit set.
type CommandID uint32

// The PDUs msgsvc sends or understands. Others are answered with
// generic_nack (ESME_RINVCMDID) when they are requests and ignored when they
// are responses.
const (
	GenericNack         CommandID = 0x80000000
	BindReceiver        CommandID = 0x00000001
	BindReceiverResp    CommandID = 0x80000001
	BindTransmitter     CommandID = 0x00000002
	BindTransmitterResp CommandID = 0x80000002
	QuerySM             CommandID = 0x00000003
	QuerySMResp         CommandID = 0x80000003
	SubmitSM            CommandID = 0x00000004
	SubmitSMResp        CommandID = 0x80000004
	DeliverSM           CommandID = 0x00000005
	DeliverSMResp       CommandID = 0x80000005
	Unbind              CommandID = 0x00000006
	UnbindResp          CommandID = 0x80000006
	BindTransceiver     CommandID = 0x00000009
	BindTransceiverResp CommandID = 0x80000009
	EnquireLink         CommandID = 0x00000015
	EnquireLinkResp     CommandID = 0x80000015
)

// IsResponse reports whether c answers a request (generic_nack included).
func (c CommandID) IsResponse() bool { return c&0x80000000 != 0 }

// Resp is the command that answers c.
func (c CommandID) Resp() CommandID { return c | 0x80000000 }

func (c CommandID) String() string {
	switch c {
	case GenericNack:
		return "generic_nack"
	case BindReceiver:
		return "bind_receiver"
	case BindReceiverResp:
		return "bind_receiver_resp"
	case BindTransmitter:
		return "bind_transmitter"
	case BindTransmitterResp:
		return "bind_transmitter_resp"
	case QuerySM:
		return "query_sm"
	case QuerySMResp:
		return "query_sm_resp"
	case SubmitSM:
		return "submit_sm"
	case SubmitSMResp:
		return "submit_sm_resp"
	case DeliverSM:
		return "deliver_sm"
	case DeliverSMResp:
		return "deliver_sm_resp"
	case Unbind:
		return "unbind"
	case UnbindResp:
		return "unbind_resp"
	case BindTransceiver:
		return "bind_transceiver"
	case BindTransceiverResp:
		return "bind_transceiver_resp"
	case EnquireLink:
		return "enquire_link"
	case EnquireLinkResp:
		return "enquire_link_resp"
	}
	return fmt.Sprintf("command_0x%08x", uint32(c))
}

// Header sizes and limits.
const (
	// HeaderLen is the size of command_length, command_id, command_status
	// and sequence_number.
	HeaderLen = 16
	// MaxPDULen bounds command_length. SMPP sets no limit, but a PDU carries
	// at most a 254-octet short_message or a 64 KiB message_payload plus
	// some hundred octets of fields; anything longer is garbage or hostile,
	// and refusing it before reading means a peer cannot make us allocate
	// whatever its length field claims.
	MaxPDULen = 64*1024 + 1024
	// MaxShortMessage is the largest sm_length (§5.2.22).
	MaxShortMessage = 254
	// InterfaceVersion is SMPP 3.4, sent in bind_transceiver.
	InterfaceVersion = 0x34
)

// Maximum sizes of C-octet strings, NUL terminator included (§4).
const (
	MaxSystemID     = 16
	MaxPassword     = 9
	MaxSystemType   = 13
	MaxAddressRange = 41
	MaxServiceType  = 6
	MaxAddr         = 21
	MaxTime         = 17 // a time is either empty or exactly 16 characters
	MaxMessageID    = 65
)

// esm_class bits used here (§5.2.12).
const (
	ESMClassReceipt = 0x04 // deliver_sm: SMSC delivery receipt
	ESMClassUDHI    = 0x40 // short_message starts with a user data header
)

// data_coding values used here (§5.2.19).
const (
	CodingDefault = 0x00 // SMSC default alphabet: GSM 03.38 here
	CodingASCII   = 0x01 // IA5 (CCITT T.50) / ASCII
	CodingLatin1  = 0x03 // ISO-8859-1
	CodingBinary  = 0x04 // 8-bit binary
	CodingUCS2    = 0x08 // ISO/IEC 10646 UCS-2 (UTF-16BE in practice)
)

// Type of number and numbering plan indicators (§5.2.5, §5.2.6).
const (
	TONUnknown       = 0x00
	TONInternational = 0x01
	TONAlphanumeric  = 0x05
	NPIUnknown       = 0x00
	NPIISDN          = 0x01 // E.163/E.164
)

// PDU is one decoded SMPP PDU. Body is nil for the PDUs that have none
// (enquire_link, unbind, their responses, generic_nack) and for an error
// response that came without a body, which SMPP 3.4 allows.
type PDU struct {
	Command CommandID
	Status  Status
	Seq     uint32
	Body    Body
}

// Body is the part of a PDU after the header. The set of bodies is closed:
// Bind, BindResp, SM, SMResp and Raw.
type Body interface {
	appendTo(b []byte) ([]byte, error)
}

// Bind is the body of bind_transmitter, bind_receiver and bind_transceiver
// (§4.1).
type Bind struct {
	SystemID         string
	Password         string
	SystemType       string
	InterfaceVersion byte
	AddrTON          byte
	AddrNPI          byte
	AddressRange     string
}

// BindResp is the body of the three bind responses (§4.1).
type BindResp struct {
	SystemID string
	TLVs     TLVs
}

// SM is the body shared by submit_sm (§4.4.1) and deliver_sm (§4.6.1);
// deliver_sm leaves ScheduleDeliveryTime and ValidityPeriod empty.
type SM struct {
	ServiceType          string
	SourceTON            byte
	SourceNPI            byte
	SourceAddr           string
	DestTON              byte
	DestNPI              byte
	DestAddr             string
	ESMClass             byte
	ProtocolID           byte
	PriorityFlag         byte
	ScheduleDeliveryTime string
	ValidityPeriod       string
	RegisteredDelivery   byte
	ReplaceIfPresent     byte
	DataCoding           byte
	SMDefaultMsgID       byte
	ShortMessage         []byte
	TLVs                 TLVs
}

// SMResp is the body of submit_sm_resp and deliver_sm_resp (§4.4.2,
// §4.6.2). deliver_sm_resp carries an empty MessageID. TLVs are accepted
// because SMPP 5.0 SMSCs may add some.
type SMResp struct {
	MessageID string
	TLVs      TLVs
}

// Query is the body of query_sm (§4.8.1): the SMSC's id of a message and
// the source address it was submitted with.
type Query struct {
	MessageID  string
	SourceTON  byte
	SourceNPI  byte
	SourceAddr string
}

// QueryResp is the body of query_sm_resp (§4.8.2).
type QueryResp struct {
	MessageID    string
	FinalDate    string // empty until the message is final
	MessageState MessageState
	ErrorCode    byte // the network's error code, 0 when none
}

// Raw keeps the body of a command this package does not interpret, so that
// it can still be framed, logged and nacked.
type Raw struct {
	Data []byte
}

// MessageState is the message_state TLV (SMPP 3.4 §5.3.2.35).
type MessageState byte

const (
	StateEnroute       MessageState = 1
	StateDelivered     MessageState = 2
	StateExpired       MessageState = 3
	StateDeleted       MessageState = 4
	StateUndeliverable MessageState = 5
	StateAccepted      MessageState = 6
	StateUnknown       MessageState = 7
	StateRejected      MessageState = 8
)
