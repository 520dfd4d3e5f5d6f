package pdu

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Decoding errors. ErrLength means the stream cannot be trusted any more
// (the next PDU cannot be found), so a session drops the connection;
// ErrMalformed means one PDU was framed correctly but its body is wrong, so
// a session can answer it with generic_nack and go on.
var (
	ErrLength    = errors.New("smpp: bad command_length")
	ErrMalformed = errors.New("smpp: malformed PDU")
)

// ReadPDU reads one PDU. The length is checked before the body is
// allocated, so a hostile length costs nothing. Errors wrapping ErrLength
// or an I/O error end the stream; ErrMalformed leaves it usable, and the
// returned PDU then still carries the header (for a generic_nack).
func ReadPDU(r io.Reader) (PDU, error) {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return PDU{}, fmt.Errorf("smpp: read command_length: %w", err)
	}
	n := binary.BigEndian.Uint32(head[:])
	if n < HeaderLen || n > MaxPDULen {
		return PDU{}, fmt.Errorf("%w: %d (allowed %d to %d)", ErrLength, n, HeaderLen, MaxPDULen)
	}
	buf := make([]byte, n)
	copy(buf, head[:])
	if _, err := io.ReadFull(r, buf[4:]); err != nil {
		return PDU{}, fmt.Errorf("smpp: read PDU of %d octets: %w", n, err)
	}
	return Decode(buf)
}

// Decode decodes one whole PDU, header included. It never panics and never
// allocates more than len(b). When the header is sound but the body is not,
// the error wraps ErrMalformed and the PDU carries the header without a body.
func Decode(b []byte) (PDU, error) {
	if len(b) < HeaderLen {
		return PDU{}, fmt.Errorf("%w: %d octets, shorter than a header", ErrLength, len(b))
	}
	n := binary.BigEndian.Uint32(b)
	if int64(n) != int64(len(b)) || n > MaxPDULen {
		return PDU{}, fmt.Errorf("%w: says %d, have %d (max %d)", ErrLength, n, len(b), MaxPDULen)
	}
	p := PDU{
		Command: CommandID(binary.BigEndian.Uint32(b[4:])),
		Status:  Status(binary.BigEndian.Uint32(b[8:])),
		Seq:     binary.BigEndian.Uint32(b[12:]),
	}
	body, err := decodeBody(p.Command, p.Status, b[HeaderLen:])
	if err != nil {
		return p, err
	}
	p.Body = body
	return p, nil
}

func decodeBody(cmd CommandID, st Status, body []byte) (Body, error) {
	r := &reader{b: body, cmd: cmd}
	switch cmd {
	case GenericNack, Unbind, UnbindResp, EnquireLink, EnquireLinkResp:
		if len(body) != 0 {
			return nil, r.errf("body", "%d octets where none belong", len(body))
		}
		return nil, nil
	case BindTransceiver, BindTransmitter, BindReceiver:
		return decodeBind(r)
	case BindTransceiverResp, BindTransmitterResp, BindReceiverResp, SubmitSMResp, DeliverSMResp:
		if len(body) == 0 && st != StatusOK {
			// §4.1.6, §4.4.2: the body is left out of an error response.
			return nil, nil
		}
		if cmd != SubmitSMResp && cmd != DeliverSMResp {
			return decodeBindResp(r)
		}
		return decodeSMResp(r)
	case SubmitSM, DeliverSM:
		return decodeSM(r)
	case QuerySM:
		return decodeQuery(r)
	case QuerySMResp:
		if len(body) == 0 && st != StatusOK {
			return nil, nil
		}
		return decodeQueryResp(r)
	}
	return &Raw{Data: append([]byte(nil), body...)}, nil
}

func decodeBind(r *reader) (Body, error) {
	b := &Bind{
		SystemID:         r.cstring("system_id", MaxSystemID),
		Password:         r.cstring("password", MaxPassword),
		SystemType:       r.cstring("system_type", MaxSystemType),
		InterfaceVersion: r.byte1("interface_version"),
		AddrTON:          r.byte1("addr_ton"),
		AddrNPI:          r.byte1("addr_npi"),
		AddressRange:     r.cstring("address_range", MaxAddressRange),
	}
	return r.end(b, "address_range")
}

func decodeBindResp(r *reader) (Body, error) {
	b := &BindResp{SystemID: r.cstring("system_id", MaxSystemID)}
	return r.tlvs(b, &b.TLVs)
}

func decodeSMResp(r *reader) (Body, error) {
	b := &SMResp{MessageID: r.cstring("message_id", MaxMessageID)}
	return r.tlvs(b, &b.TLVs)
}

func decodeQuery(r *reader) (Body, error) {
	q := &Query{
		MessageID:  r.cstring("message_id", MaxMessageID),
		SourceTON:  r.byte1("source_addr_ton"),
		SourceNPI:  r.byte1("source_addr_npi"),
		SourceAddr: r.cstring("source_addr", MaxAddr),
	}
	return r.end(q, "source_addr")
}

func decodeQueryResp(r *reader) (Body, error) {
	q := &QueryResp{
		MessageID:    r.cstring("message_id", MaxMessageID),
		FinalDate:    r.time("final_date"),
		MessageState: MessageState(r.byte1("message_state")),
		ErrorCode:    r.byte1("error_code"),
	}
	return r.end(q, "error_code")
}

func decodeSM(r *reader) (Body, error) {
	m := &SM{
		ServiceType:          r.cstring("service_type", MaxServiceType),
		SourceTON:            r.byte1("source_addr_ton"),
		SourceNPI:            r.byte1("source_addr_npi"),
		SourceAddr:           r.cstring("source_addr", MaxAddr),
		DestTON:              r.byte1("dest_addr_ton"),
		DestNPI:              r.byte1("dest_addr_npi"),
		DestAddr:             r.cstring("destination_addr", MaxAddr),
		ESMClass:             r.byte1("esm_class"),
		ProtocolID:           r.byte1("protocol_id"),
		PriorityFlag:         r.byte1("priority_flag"),
		ScheduleDeliveryTime: r.time("schedule_delivery_time"),
		ValidityPeriod:       r.time("validity_period"),
		RegisteredDelivery:   r.byte1("registered_delivery"),
		ReplaceIfPresent:     r.byte1("replace_if_present_flag"),
		DataCoding:           r.byte1("data_coding"),
		SMDefaultMsgID:       r.byte1("sm_default_msg_id"),
	}
	n := int(r.byte1("sm_length"))
	if r.err == nil && n > MaxShortMessage {
		r.fail("sm_length", "%d (max %d)", n, MaxShortMessage)
	}
	if r.err == nil && n > r.len() {
		r.fail("short_message", "sm_length %d, %d octets left", n, r.len())
	}
	if r.err != nil {
		return nil, r.err
	}
	m.ShortMessage = append([]byte(nil), r.bytes(n)...)
	return r.tlvs(m, &m.TLVs)
}

// end is body b, whose last field is after, or the first error: octets
// after that field are one.
func (r *reader) end(b Body, after string) (Body, error) {
	if r.err == nil && r.len() != 0 {
		r.fail("body", "%d octets after %s", r.len(), after)
	}
	if r.err != nil {
		return nil, r.err
	}
	return b, nil
}

// tlvs reads the optional parameters that end body b into *into, and is
// b, or the first error.
func (r *reader) tlvs(b Body, into *TLVs) (Body, error) {
	if r.err != nil {
		return nil, r.err
	}
	ts, err := readTLVs(r)
	if err != nil {
		return nil, err
	}
	*into = ts
	return b, nil
}

// reader walks a body. The first error sticks, so a decoder reads all its
// fields and checks once; reads after an error return zero values.
type reader struct {
	b   []byte
	off int
	cmd CommandID
	err error
}

func (r *reader) len() int { return len(r.b) - r.off }

func (r *reader) errf(field, format string, args ...any) error {
	return fmt.Errorf("%w: %s.%s: %s", ErrMalformed, r.cmd, field, fmt.Sprintf(format, args...))
}

func (r *reader) fail(field, format string, args ...any) {
	if r.err == nil {
		r.err = r.errf(field, format, args...)
	}
}

func (r *reader) byte1(field string) byte {
	if r.err != nil {
		return 0
	}
	if r.len() < 1 {
		r.fail(field, "missing")
		return 0
	}
	c := r.b[r.off]
	r.off++
	return c
}

// cstring reads a C-octet string whose size, NUL included, is at most max.
func (r *reader) cstring(field string, max int) string {
	if r.err != nil {
		return ""
	}
	end := min(r.len(), max)
	for i := 0; i < end; i++ {
		if r.b[r.off+i] == 0 {
			s := string(r.b[r.off : r.off+i])
			r.off += i + 1
			return s
		}
	}
	r.fail(field, "no NUL terminator within %d octets", max)
	return ""
}

// time reads an SMPP time, which is either empty or 16 characters (§7.1).
func (r *reader) time(field string) string {
	s := r.cstring(field, MaxTime)
	if r.err == nil && s != "" && len(s) != MaxTime-1 {
		r.fail(field, "%d characters (must be 0 or %d)", len(s), MaxTime-1)
	}
	return s
}

// u16 and bytes are used only after the caller checked the length.
func (r *reader) u16() uint16 {
	v := binary.BigEndian.Uint16(r.b[r.off:])
	r.off += 2
	return v
}

func (r *reader) bytes(n int) []byte {
	v := r.b[r.off : r.off+n]
	r.off += n
	return v
}

// Encode encodes p, filling in command_length. Fields longer than SMPP
// allows, and strings with a NUL inside, are refused rather than cut.
func Encode(p PDU) ([]byte, error) {
	b := make([]byte, HeaderLen, 64)
	binary.BigEndian.PutUint32(b[4:], uint32(p.Command))
	binary.BigEndian.PutUint32(b[8:], uint32(p.Status))
	binary.BigEndian.PutUint32(b[12:], p.Seq)
	if p.Body != nil {
		var err error
		if b, err = p.Body.appendTo(b); err != nil {
			return nil, fmt.Errorf("encode %s: %w", p.Command, err)
		}
	}
	if len(b) > MaxPDULen {
		return nil, fmt.Errorf("encode %s: %w: %d octets (max %d)", p.Command, ErrLength, len(b), MaxPDULen)
	}
	binary.BigEndian.PutUint32(b, uint32(len(b)))
	return b, nil
}

func appendCString(b []byte, field, s string, max int) ([]byte, error) {
	if len(s)+1 > max {
		return b, fmt.Errorf("%w: %s of %d characters (max %d)", ErrMalformed, field, len(s), max-1)
	}
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return b, fmt.Errorf("%w: %s holds a NUL", ErrMalformed, field)
		}
	}
	b = append(b, s...)
	return append(b, 0), nil
}

func appendTime(b []byte, field, s string) ([]byte, error) {
	if s != "" && len(s) != MaxTime-1 {
		return b, fmt.Errorf("%w: %s must be empty or %d characters", ErrMalformed, field, MaxTime-1)
	}
	return appendCString(b, field, s, MaxTime)
}

func (m *Bind) appendTo(b []byte) ([]byte, error) {
	var err error
	w := &writer{b: b}
	w.cstring(&err, "system_id", m.SystemID, MaxSystemID)
	w.cstring(&err, "password", m.Password, MaxPassword)
	w.cstring(&err, "system_type", m.SystemType, MaxSystemType)
	w.b = append(w.b, m.InterfaceVersion, m.AddrTON, m.AddrNPI)
	w.cstring(&err, "address_range", m.AddressRange, MaxAddressRange)
	return w.b, err
}

func (m *BindResp) appendTo(b []byte) ([]byte, error) {
	b, err := appendCString(b, "system_id", m.SystemID, MaxSystemID)
	if err != nil {
		return b, err
	}
	return appendTLVs(b, m.TLVs)
}

func (m *SMResp) appendTo(b []byte) ([]byte, error) {
	b, err := appendCString(b, "message_id", m.MessageID, MaxMessageID)
	if err != nil {
		return b, err
	}
	return appendTLVs(b, m.TLVs)
}

func (m *SM) appendTo(b []byte) ([]byte, error) {
	var err error
	w := &writer{b: b}
	w.cstring(&err, "service_type", m.ServiceType, MaxServiceType)
	w.b = append(w.b, m.SourceTON, m.SourceNPI)
	w.cstring(&err, "source_addr", m.SourceAddr, MaxAddr)
	w.b = append(w.b, m.DestTON, m.DestNPI)
	w.cstring(&err, "destination_addr", m.DestAddr, MaxAddr)
	w.b = append(w.b, m.ESMClass, m.ProtocolID, m.PriorityFlag)
	if err == nil {
		w.b, err = appendTime(w.b, "schedule_delivery_time", m.ScheduleDeliveryTime)
	}
	if err == nil {
		w.b, err = appendTime(w.b, "validity_period", m.ValidityPeriod)
	}
	if err == nil && len(m.ShortMessage) > MaxShortMessage {
		err = fmt.Errorf("%w: short_message of %d octets (max %d)", ErrMalformed, len(m.ShortMessage), MaxShortMessage)
	}
	if err != nil {
		return w.b, err
	}
	w.b = append(w.b, m.RegisteredDelivery, m.ReplaceIfPresent, m.DataCoding, m.SMDefaultMsgID,
		byte(len(m.ShortMessage)))
	w.b = append(w.b, m.ShortMessage...)
	return appendTLVs(w.b, m.TLVs)
}

func (m *Query) appendTo(b []byte) ([]byte, error) {
	var err error
	w := &writer{b: b}
	w.cstring(&err, "message_id", m.MessageID, MaxMessageID)
	w.b = append(w.b, m.SourceTON, m.SourceNPI)
	w.cstring(&err, "source_addr", m.SourceAddr, MaxAddr)
	return w.b, err
}

func (m *QueryResp) appendTo(b []byte) ([]byte, error) {
	var err error
	w := &writer{b: b}
	w.cstring(&err, "message_id", m.MessageID, MaxMessageID)
	if err == nil {
		w.b, err = appendTime(w.b, "final_date", m.FinalDate)
	}
	w.b = append(w.b, byte(m.MessageState), m.ErrorCode)
	return w.b, err
}

func (m *Raw) appendTo(b []byte) ([]byte, error) { return append(b, m.Data...), nil }

// writer appends fields; like reader, the first error sticks.
type writer struct{ b []byte }

func (w *writer) cstring(err *error, field, s string, max int) {
	if *err != nil {
		return
	}
	w.b, *err = appendCString(w.b, field, s, max)
}
