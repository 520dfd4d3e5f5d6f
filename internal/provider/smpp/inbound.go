package smpp

import (
	"context"

	"github.com/msgsvc/msgsvc/internal/phone"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// handleDeliver answers one deliver_sm, after the Sink has what it carried:
// ESME_ROK once the Sink stored it, ESME_RX_T_APPN when the Sink failed (the
// SMSC sends it again later), ESME_RX_P_APPN when it cannot be read at all.
func (c *Client) handleDeliver(s *session, p PDU) {
	st := c.deliver(p)
	if st != StatusOK {
		c.refuse(s, p, st)
	}
	_ = s.respond(DeliverSMResp, st, p.Seq, &SMResp{})
}

// refuse counts and logs a deliver_sm answered with an error: a carrier
// that does not send it again leaves its receipt or reply lost, and an
// operator must be able to see that it happened and why.
func (c *Client) refuse(s *session, p PDU, st Status) {
	c.refusedMu.Lock()
	if c.refused == nil {
		c.refused = map[Status]uint64{}
	}
	c.refused[st]++
	c.refusedMu.Unlock()
	from := ""
	if sm, ok := p.Body.(*SM); ok {
		from = sm.SourceAddr
	}
	c.log.Warn("smpp: deliver_sm refused", "bind", s.slot, "seq", p.Seq, "status", st.String(), "from", from)
}

func (c *Client) deliver(p PDU) Status {
	sm, ok := p.Body.(*SM)
	if !ok {
		return StatusXPAppn
	}
	ctx, cancel := context.WithTimeout(c.runCtx, c.cfg.RequestTimeout)
	defer cancel()
	switch sm.ESMClass & 0x3C { // message type bits (§5.2.12)
	case 0x04, 0x20: // SMSC delivery receipt, intermediate notification
		return c.onReceipt(ctx, sm)
	case 0x00:
		return c.onReply(ctx, sm)
	}
	// SME delivery or manual acknowledgements: nothing to report.
	c.log.Info("smpp: deliver_sm of an unhandled type acknowledged", "esm_class", sm.ESMClass)
	return StatusOK
}

// onReceipt hands a receipt's final status to the Sink. Receipts that name
// no message or no state are acknowledged and logged: the SMSC would only
// send them again. A receipt that comes before its submit_sm_resp is passed
// on all the same; the core keeps reports it cannot match yet.
func (c *Client) onReceipt(ctx context.Context, sm *SM) Status {
	r, err := parseReceipt(sm)
	if err != nil {
		c.log.Warn("smpp: unreadable delivery receipt acknowledged", "err", err, "from", sm.SourceAddr)
		return StatusOK
	}
	st, final := r.outcome(c.clock.Now())
	if !final {
		return StatusOK
	}
	if err := c.sink.Statuses(ctx, c.cfg.Name, []provider.Status{st}); err != nil {
		c.log.Warn("smpp: receipt not stored; SMSC will retry", "ref", st.Ref, "err", err)
		c.noteErr(err)
		return StatusXTAppn
	}
	return StatusOK
}

// onReply handles a mobile-originated message, reassembling concatenated
// ones (UDH with an 8- or 16-bit reference, or the sar_ TLVs). The parts
// before the last are acknowledged once held; the whole message goes to the
// Sink before the last part is acknowledged.
func (c *Client) onReply(ctx context.Context, sm *SM) Status {
	data := sm.ShortMessage
	if len(data) == 0 {
		data, _ = sm.TLVs.Get(TagMessagePayload)
	}
	var ci *concatInfo
	fill := 0
	if sm.ESMClass&ESMClassUDHI != 0 {
		var n int
		var err error
		if ci, n, data, err = splitUDH(data); err != nil {
			c.log.Warn("smpp: inbound message with a broken UDH refused", "err", err, "from", sm.SourceAddr)
			return StatusXPAppn
		}
		fill = fillBits(n)
	} else if ref, ok := sm.TLVs.Uint16(TagSARMsgRefNum); ok {
		total, _ := sm.TLVs.Byte(TagSARTotalSegments)
		seq, _ := sm.TLVs.Byte(TagSARSegmentSeqnum)
		ci = &concatInfo{Ref: ref, Total: total, Seq: seq}
	}
	// Packed septets are unpacked per part, so that the joined parts are a
	// plain septet string; every other coding joins as octets.
	if alphabetOf(sm.DataCoding) == alphaGSM && c.cfg.GSMPacking == Packed {
		data = unpackSeptets(data, fill)
	}
	if ci == nil || (ci.Total == 1 && ci.Seq == 1) {
		return c.sendInbound(ctx, sm, decodeText(sm.DataCoding, data, 0, Unpacked))
	}
	k := reasmKey{From: sm.SourceAddr, To: sm.DestAddr, Ref: ci.Ref, Total: ci.Total}
	whole, coding, res := c.reasm.add(k, ci.Seq, sm.DataCoding, data, c.clock.Now())
	switch res {
	case partHeld:
		return StatusOK
	case partBusy:
		return StatusXTAppn
	case partInvalid:
		c.log.Warn("smpp: inbound part numbering is invalid", "seq", ci.Seq, "total", ci.Total, "from", sm.SourceAddr)
		return StatusXPAppn
	}
	st := c.sendInbound(ctx, sm, decodeText(coding, whole, 0, Unpacked))
	c.reasm.finish(k, st == StatusOK)
	return st
}

func (c *Client) sendInbound(ctx context.Context, sm *SM, text string) Status {
	in := provider.Inbound{From: phone.SMPPAddress(sm.SourceAddr, sm.SourceTON), To: phone.SMPPAddress(sm.DestAddr, sm.DestTON),
		Channel: "SMS", Body: text, At: c.clock.Now()}
	if err := c.sink.Inbound(ctx, c.cfg.Name, in); err != nil {
		c.log.Warn("smpp: inbound message not stored; SMSC will retry", "from", sm.SourceAddr, "err", err)
		c.noteErr(err)
		return StatusXTAppn
	}
	return StatusOK
}
