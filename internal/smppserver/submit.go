package smppserver

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/message"
	"github.com/msgsvc/msgsvc/internal/provider/smpp"
	"github.com/msgsvc/msgsvc/internal/ratelimit"
)

// sendingType is the API's request type whose window limits sends.
const sendingType = "sending"

// submit turns a submit_sm into a send of the bind's user and returns the
// message id and the command_status to answer with. It returns once the
// message is stored (or refused).
func (s *Server) submit(ctx context.Context, ss *session, p smpp.PDU) (string, smpp.Status) {
	sm, ok := p.Body.(*smpp.SM)
	if !ok {
		return "", smpp.StatusSubmitFail
	}
	if !s.current(ctx, ss) {
		return "", smpp.StatusSubmitFail // the user was removed or its address is no longer allowed
	}
	u, acct := ss.caller()
	now := s.cfg.Now()
	d, st := draft(sm, now)
	if st != smpp.StatusOK {
		return "", st
	}
	d.SMPP = &domain.SMPPOrigin{User: u.ID, Receipt: sm.RegisteredDelivery&0x01 != 0}
	if s.cfg.Limiter != nil {
		dec, err := s.cfg.Limiter.Allow(ctx, ratelimit.Request{Key: acct.ID, TierLimit: acct.Limits.TierRPM, Type: sendingType,
			TypeLimit: acct.Limits.SendRPM})
		if err != nil {
			s.cfg.Log.Warn("smpp: rate limiter", "err", err)
			return "", smpp.StatusSubmitFail
		}
		if !dec.Allowed {
			return "", smpp.StatusThrottled
		}
	}
	caller := message.Caller{Account: acct, Key: domain.APIKey{ID: u.ID, AccountID: acct.ID, Env: u.Env}}
	out, err := s.cfg.Sender.Send(ctx, caller, d, message.SendOptions{})
	if err != nil {
		return "", refusal(err)
	}
	if len(out.Receipt.Messages) != 1 {
		return "", smpp.StatusSubmitFail
	}
	return out.Receipt.Messages[0].Message.ID, smpp.StatusOK
}

// refusal is the command_status of a refused send: a bad destination or
// an unapproved sender by name, anything else ESME_RSUBMITFAIL.
func refusal(err error) smpp.Status {
	var verr *domain.ValidationError
	if errors.As(err, &verr) {
		for _, f := range verr.Fields {
			switch f.Field {
			case "to":
				return smpp.StatusInvDstAdr
			case "from":
				return smpp.StatusInvSrcAdr
			}
		}
	}
	return smpp.StatusSubmitFail
}

// draft reads a submit_sm as a send request.
func draft(sm *smpp.SM, now time.Time) (message.Draft, smpp.Status) {
	d := message.Draft{Type: string(domain.SMS), To: strings.TrimPrefix(sm.DestAddr, "+"), From: sm.SourceAddr}
	if d.To == "" {
		return d, smpp.StatusInvDstAdr
	}
	data := sm.ShortMessage
	if payload, ok := sm.TLVs.Get(smpp.TagMessagePayload); ok {
		if len(data) > 0 {
			return d, smpp.StatusSubmitFail // both is ambiguous (§5.3.2.32)
		}
		data = payload
	}
	if sm.ESMClass&smpp.ESMClassUDHI != 0 {
		n, err := smpp.UDHLen(data)
		if err != nil {
			return d, smpp.StatusSubmitFail
		}
		d.UDH, data = hex.EncodeToString(data[:n]), data[n:]
	}
	switch sm.DataCoding {
	case smpp.CodingDefault, smpp.CodingLatin1, smpp.CodingUCS2:
	default:
		return d, smpp.StatusSubmitFail
	}
	d.Text = smpp.DecodeText(sm.DataCoding, data)
	if sm.ValidityPeriod != "" {
		until, err := parseTime(sm.ValidityPeriod, now)
		if err != nil {
			return d, smpp.StatusSubmitFail
		}
		secs := int(until.Sub(now) / time.Second)
		secs = min(max(secs, message.MinValidity), message.MaxValidity)
		d.Validity = &secs
	}
	if sm.ScheduleDeliveryTime != "" {
		at, err := parseTime(sm.ScheduleDeliveryTime, now)
		if err != nil {
			return d, smpp.StatusSubmitFail
		}
		d.ScheduledAt = at.UTC().Format(time.RFC3339Nano)
	}
	return d, smpp.StatusOK
}

// parseTime reads an SMPP time (§7.1): absolute YYMMDDhhmmsstnn± (nn
// quarter hours from UTC) or relative YYMMDDhhmmss000R from now.
func parseTime(v string, now time.Time) (time.Time, error) {
	if len(v) != 16 {
		return time.Time{}, fmt.Errorf("time %q is not 16 characters", v)
	}
	n := make([]int, 6)
	for i := range n {
		x, err := strconv.Atoi(v[2*i : 2*i+2])
		if err != nil {
			return time.Time{}, fmt.Errorf("time %q: %w", v, err)
		}
		n[i] = x
	}
	switch v[15] {
	case 'R':
		return now.AddDate(n[0], n[1], n[2]).Add(time.Duration(n[3])*time.Hour + time.Duration(n[4])*time.Minute +
			time.Duration(n[5])*time.Second), nil
	case '+', '-':
		tenths, err1 := strconv.Atoi(v[12:13])
		quarters, err2 := strconv.Atoi(v[13:15])
		if err1 != nil || err2 != nil || quarters > 48 {
			return time.Time{}, fmt.Errorf("time %q: bad offset", v)
		}
		off := time.Duration(quarters) * 15 * time.Minute
		if v[15] == '-' {
			off = -off
		}
		t := time.Date(2000+n[0], time.Month(n[1]), n[2], n[3], n[4], n[5], tenths*int(100*time.Millisecond), time.UTC)
		return t.Add(-off), nil
	}
	return time.Time{}, fmt.Errorf("time %q ends in %q, not R, + or -", v, v[15])
}
