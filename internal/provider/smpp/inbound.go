package smpp

import (
	"context"

	"github.com/msgsvc/msgsvc/internal/pdu"
	"github.com/msgsvc/msgsvc/internal/phone"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// handleDeliver answers one deliver_sm, after the Sink has what it carried:
// ESME_ROK once the Sink stored it, ESME_RX_T_APPN when the Sink failed (the
// SMSC sends it again later), ESME_RX_P_APPN when it cannot be read at all.
func (c *Client) handleDeliver(s *session, p pdu.PDU) {
	st := c.deliver(p)
	if st != pdu.StatusOK {
		c.refuse(s, p, st)
	}
	_ = s.respond(pdu.DeliverSMResp, st, p.Seq, &pdu.SMResp{})
}

// refuse counts and logs a deliver_sm answered with an error: a carrier
// that does not send it again leaves its receipt or reply lost, and an
// operator must be able to see that it happened and why.
func (c *Client) refuse(s *session, p pdu.PDU, st pdu.Status) {
	c.refusedMu.Lock()
	if c.refused == nil {
		c.refused = map[pdu.Status]uint64{}
	}
	c.refused[st]++
	c.refusedMu.Unlock()
	from := ""
	if sm, ok := p.Body.(*pdu.SM); ok {
		from = sm.SourceAddr
	}
	c.log.Warn("smpp: deliver_sm refused", "bind", s.slot, "seq", p.Seq, "status", st.String(), "from", from)
}

func (c *Client) deliver(p pdu.PDU) pdu.Status {
	sm, ok := p.Body.(*pdu.SM)
	if !ok {
		return pdu.StatusXPAppn
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
	return pdu.StatusOK
}

// onReceipt hands a receipt's final status to the Sink. Receipts that name
// no message or no state are acknowledged and logged: the SMSC would only
// send them again. A receipt that comes before its submit_sm_resp is passed
// on all the same; the core keeps reports it cannot match yet.
func (c *Client) onReceipt(ctx context.Context, sm *pdu.SM) pdu.Status {
	r, err := parseReceipt(sm)
	if err != nil {
		c.log.Warn("smpp: unreadable delivery receipt acknowledged", "err", err, "from", sm.SourceAddr)
		return pdu.StatusOK
	}
	st, final := r.outcome(c.clock.Now())
	if !final {
		return pdu.StatusOK
	}
	if err := c.sink.Statuses(ctx, c.cfg.Name, []provider.Status{st}); err != nil {
		c.log.Warn("smpp: receipt not stored; SMSC will retry", "ref", st.Ref, "err", err)
		c.noteErr(err)
		return pdu.StatusXTAppn
	}
	return pdu.StatusOK
}

// onReply handles a mobile-originated message, reassembling concatenated
// ones (UDH with an 8- or 16-bit reference, or the sar_ TLVs). The parts
// before the last are acknowledged once held; the whole message goes to the
// Sink before the last part is acknowledged.
func (c *Client) onReply(ctx context.Context, sm *pdu.SM) pdu.Status {
	data := sm.ShortMessage
	if len(data) == 0 {
		data, _ = sm.TLVs.Get(pdu.TagMessagePayload)
	}
	var ci *pdu.ConcatInfo
	fill := 0
	if sm.ESMClass&pdu.ESMClassUDHI != 0 {
		var n int
		var err error
		if ci, n, data, err = pdu.SplitUDH(data); err != nil {
			c.log.Warn("smpp: inbound message with a broken UDH refused", "err", err, "from", sm.SourceAddr)
			return pdu.StatusXPAppn
		}
		fill = pdu.FillBits(n)
	} else if ref, ok := sm.TLVs.Uint16(pdu.TagSARMsgRefNum); ok {
		total, _ := sm.TLVs.Byte(pdu.TagSARTotalSegments)
		seq, _ := sm.TLVs.Byte(pdu.TagSARSegmentSeqnum)
		ci = &pdu.ConcatInfo{Ref: ref, Total: total, Seq: seq}
	}
	// Packed septets are unpacked per part, so that the joined parts are a
	// plain septet string; every other coding joins as octets.
	if pdu.IsGSM(sm.DataCoding) && c.cfg.GSMPacking == pdu.Packed {
		data = pdu.UnpackSeptets(data, fill)
	}
	if ci == nil || (ci.Total == 1 && ci.Seq == 1) {
		return c.sendInbound(ctx, sm, pdu.DecodeUserData(sm.DataCoding, data, 0, pdu.Unpacked))
	}
	k := reasmKey{From: sm.SourceAddr, To: sm.DestAddr, Ref: ci.Ref, Total: ci.Total}
	whole, coding, res := c.reasm.add(k, ci.Seq, sm.DataCoding, data, c.clock.Now())
	switch res {
	case partHeld:
		return pdu.StatusOK
	case partBusy:
		return pdu.StatusXTAppn
	case partInvalid:
		c.log.Warn("smpp: inbound part numbering is invalid", "seq", ci.Seq, "total", ci.Total, "from", sm.SourceAddr)
		return pdu.StatusXPAppn
	}
	st := c.sendInbound(ctx, sm, pdu.DecodeUserData(coding, whole, 0, pdu.Unpacked))
	c.reasm.finish(k, st == pdu.StatusOK)
	return st
}

func (c *Client) sendInbound(ctx context.Context, sm *pdu.SM, text string) pdu.Status {
	in := provider.Inbound{From: phone.SMPPAddress(sm.SourceAddr, sm.SourceTON), To: phone.SMPPAddress(sm.DestAddr, sm.DestTON),
		Channel: "SMS", Body: text, At: c.clock.Now()}
	if err := c.sink.Inbound(ctx, c.cfg.Name, in); err != nil {
		c.log.Warn("smpp: inbound message not stored; SMSC will retry", "from", sm.SourceAddr, "err", err)
		c.noteErr(err)
		return pdu.StatusXTAppn
	}
	return pdu.StatusOK
}
